#!/bin/sh
# Writes .env next to docker-compose.yml with fresh random secrets, so no installation runs on a
# publicly known password. Never overwrites an existing .env (rotate by editing it by hand).
set -eu
cd "$(dirname "$0")/../.."
if [ -e .env ]; then
  echo ".env exists; leaving it alone" >&2
  exit 0
fi
secret() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
umask 077
{
  echo "POSTGRES_PASSWORD=$(secret)"
  echo "AUTH_JWT_SECRET=$(secret)"
  echo "GRAFANA_ADMIN_PASSWORD=$(secret)"
} > .env
echo "wrote .env (mode 600) with random POSTGRES_PASSWORD, AUTH_JWT_SECRET, GRAFANA_ADMIN_PASSWORD"
