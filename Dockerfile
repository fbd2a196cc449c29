# syntax=docker/dockerfile:1
#
# Pail: one image for the server (and the `pail` operator CLI).
#   docker build -t pail .
#   docker run -p 8080:8080 -v pail-data:/data pail
# See docs/deploy.md. Not built on the machine this was written on (no Docker
# engine there); the steps are the ones `.ci/run` and `npm test` use.

ARG NODE_VERSION=20

# --- build: install everything, compile TypeScript, build the dashboard -------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 downloads a prebuilt binary; these are only needed when none
# matches the platform and it compiles from source.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# Manifests first, so the dependency layer is cached while only sources change.
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/server/package.json packages/server/
COPY packages/sdk/package.json packages/sdk/
COPY packages/cli/package.json packages/cli/
COPY packages/dashboard/package.json packages/dashboard/
# --ignore-scripts: the root `prepare` script would build before the sources
# are copied. The two packages that need their install scripts get them next.
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3 esbuild

COPY tsconfig.base.json ./
COPY packages ./packages
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/src packages/*/test packages/*/*.tsbuildinfo packages/dashboard/node_modules

# --- runtime: compiled output and production dependencies only ---------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app /app
# DATA_DIR holds the SQLite file, blobs and the generated session secret of the
# embedded default; with PostgreSQL + S3 + SESSION_SECRET it stays empty.
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/packages/cli/bin/pail.js /usr/local/bin/pail
VOLUME ["/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM: stop accepting, finish requests in flight (up to 30 s), close stores.
STOPSIGNAL SIGTERM
CMD ["node", "packages/server/dist/main.js"]
