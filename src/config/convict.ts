import { createRequire } from "node:module";
import type convictModule from "convict";

/**
 * convict, loaded with require(): src/ never imports "convict" for its value (eslint
 * no-restricted-imports). It is CommonJS, as ioredis is: see src/redis/ioredis.ts for what an
 * `import` of it costs a command's start-up on Node 20.
 */
export const convict = createRequire(import.meta.url)("convict") as typeof convictModule;
