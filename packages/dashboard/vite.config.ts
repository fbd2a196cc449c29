import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// In development the Pail server runs on :8080 and Vite proxies the API and the
// storage URLs to it, so the browser still sees one origin (the server checks
// Origin on state-changing requests, hence changeOrigin: false).
const target = process.env.PAIL_SERVER ?? 'http://localhost:8080';

// `@pail/shared` re-exports its TypeBox schemas, which would pull TypeBox into
// the bundle. The dashboard needs only the plain rule modules at runtime, so
// those are imported directly (types still come from `@pail/shared`).
const sharedSrc = fileURLToPath(new URL('../shared/src/', import.meta.url));

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: [{ find: /^@pail\/shared\/(names|plans)$/, replacement: `${sharedSrc}$1.ts` }],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
  },
  server: {
    proxy: {
      '/api': { target },
      '/storage': { target },
      '/healthz': { target },
    },
  },
});
