// Type-aware linting: floating promises and misused promises are what kill daemons.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "test/bench/results/**",
      "test/chaos/build/**",
      "coverage/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["config/*.js", "test/*.mjs"] },
        tsconfigRootDir: resolve(dirname(fileURLToPath(import.meta.url)), ".."),
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unnecessary-condition": "off",
      "@typescript-eslint/no-confusing-void-expression": "off",
    },
  },
  {
    // CommonJS packages are loaded with require(), each in one module: imported, Node 20 takes
    // every file they require through its ES module loader, which costs a command's start-up
    // (src/redis/ioredis.ts). Their types may still be imported.
    files: ["src/**/*.ts"],
    ignores: ["src/redis/ioredis.ts", "src/config/convict.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "ioredis",
              message: "take Redis and Cluster from src/redis/ioredis.ts (loaded with require())",
              allowTypeImports: true,
            },
            {
              name: "convict",
              message: "take convict from src/config/convict.ts (loaded with require())",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
