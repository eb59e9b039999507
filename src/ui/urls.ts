/**
 * Links of the console. Names come from Redis and may hold anything: a string with a lone
 * surrogate (never produced by UTF-8 decoding, but possible in a configuration file) would make
 * encodeURIComponent throw, so it is made well-formed first.
 */
function wellFormed(text: string): string {
  // With the u flag a pair is one code point: only a lone surrogate matches.
  return text.replace(/[\uD800-\uDFFF]/gu, "\uFFFD");
}

/** `path?name=value&...`, values URL-encoded, empty and undefined parameters left out. */
export function uiHref(path: string, params: Record<string, string | number | undefined>): string {
  const query = Object.entries(params)
    .filter(
      (entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== "",
    )
    .map(([name, value]) => `${name}=${encodeURIComponent(wellFormed(String(value)))}`)
    .join("&");
  return query === "" ? path : `${path}?${query}`;
}

/** The link to one group's page. */
export function groupHref(stream: string, group: string): string {
  return uiHref("/ui/group", { stream, group });
}

/** The link to one redrive task's page. */
export function taskHref(id: string): string {
  return uiHref("/ui/task", { id });
}
