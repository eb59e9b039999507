/** Redis TIME in Unix ms: ages are measured on the server's clock, like ids. */
export async function redisNowMs(redis: {
  call(command: string, ...args: string[]): Promise<unknown>;
}): Promise<number> {
  const reply = (await redis.call("TIME")) as [string, string];
  return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
}
