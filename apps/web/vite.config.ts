// The web app's production build: apps/web/ui → apps/web/dist, served as static files
// by the web service (src/static.ts). `pnpm --filter @rakazo/web build`.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL("./ui", import.meta.url)),
  base: "/",
  build: {
    outDir: fileURLToPath(new URL("./dist", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "app",
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
    // One bundle on purpose (React, xterm.js, the app); its gzip size is a bench row (≤ 300 KB).
    chunkSizeWarningLimit: 1024,
  },
});
