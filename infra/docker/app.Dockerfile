# The server image (API, worker, web, secrets init, optional S3 store: the command picks) for
# machines with a registry. Without one, infra/docker/build-images.sh builds the same image
# offline; both use infra/docker/server-entrypoint.sh, which turns the compose secrets volumes
# into variables at start (nothing secret is baked in).
FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN corepack enable && corepack prepare pnpm@11.28.10 --activate
WORKDIR /app
COPY . .
RUN pnpm install --prod --frozen-lockfile
COPY infra/docker/server-entrypoint.sh /usr/local/bin/rakazo-entrypoint
ENV NODE_ENV=production LANG=C.UTF-8
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/rakazo-entrypoint"]
CMD ["node", "apps/api/src/main.ts"]
