# The control-plane image (API, worker, launcher): one image, the command picks the process.
# For machines with a registry; the offline path is ./rakazo start.
FROM node:24-bookworm-slim
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN corepack enable && corepack prepare pnpm@11.28.10 --activate
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile
ENV NODE_ENV=production API_HOST=0.0.0.0
EXPOSE 8787
CMD ["node", "apps/api/src/main.ts"]
