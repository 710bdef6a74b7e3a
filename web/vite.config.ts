/// <reference types="vitest/config" />
import { defineConfig } from "vite";

// Everything the page loads is bundled into dist/: no CDN, no web fonts, no remote icons.
export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
