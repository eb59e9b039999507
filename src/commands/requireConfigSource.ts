import { ConfigError } from "../config/ConfigError.js";

/**
 * Every command needs a configuration file, named by --config or STREAM_JANITOR_CONFIG. Without
 * one the defaults would point at 127.0.0.1:6379: an operator on call who forgot the flag would
 * talk to whatever listens there, or wait on nothing and read ioredis' retry message.
 */
export function requireConfigSource(configPath: string | undefined, env: NodeJS.ProcessEnv): void {
  if ((configPath ?? "") !== "" || (env.STREAM_JANITOR_CONFIG ?? "") !== "") return;
  throw new ConfigError(
    "--config",
    undefined,
    "a configuration file: give --config FILE or set STREAM_JANITOR_CONFIG " +
      "(there is no default: none would mean a Redis at 127.0.0.1:6379)",
  );
}
