# The server image (API, worker, web, secrets init, optional S3 store: the command picks) for
# machines with a registry. Without one, infra/docker/build-images.sh builds the same image
# offline; both use infra/docker/server-entrypoint.sh, which turns the compose secrets volumes
# into variables at start (nothing secret is baked in).
# The supervisor bundle the cloud providers install into every machine (CMP-8) and the web app's
# production build (apps/web/dist), both made with the dev dependencies (esbuild, Vite) in a
# stage of their own; the image keeps production dependencies only.
FROM node:24-bookworm-slim AS supervisor
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN corepack enable && corepack prepare pnpm@11.28.10 --activate
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile \
  && node infra/sandboxes/supervisor/src/bundle.ts infra/sandboxes/supervisor/dist/supervisor.mjs \
  && pnpm --filter @rakazo/web build

FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN corepack enable && corepack prepare pnpm@11.28.10 --activate
WORKDIR /app
COPY . .
RUN pnpm install --prod --frozen-lockfile
# Read by API and worker at RAKAZO_REMOTE_SUPERVISOR (docker-compose.yml).
COPY --from=supervisor /app/infra/sandboxes/supervisor/dist/supervisor.mjs infra/sandboxes/supervisor/dist/supervisor.mjs
# Served by the web service at / (apps/web/src/static.ts).
COPY --from=supervisor /app/apps/web/dist apps/web/dist
COPY infra/docker/server-entrypoint.sh /usr/local/bin/rakazo-entrypoint
ENV NODE_ENV=production LANG=C.UTF-8
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/rakazo-entrypoint"]
CMD ["node", "apps/api/src/main.ts"]
