import { gunzipSync } from "node:zlib";
import { Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { sharedExposition, type ScrapeReadOutcome } from "../../src/http/sharedExposition.js";
import { waitFor } from "../support/waitFor.js";

/** A refresh the test steers: each call takes the next outcome it is given. */
function steeredRefresh() {
  const outcomes: ScrapeReadOutcome[] = [];
  return {
    next: (outcome: ScrapeReadOutcome) => outcomes.push(outcome),
    refresh: () => Promise.resolve(outcomes.shift() ?? {}),
  };
}

function valueIn(body: Buffer): string | undefined {
  return /^reads_value (\S+)$/mu.exec(gunzipSync(body).toString())?.[1];
}

describe("a scrape that stopped waiting for its read", () => {
  it("gets the body rendered when the last late read landed, and a scrape in time renders anew", async () => {
    const registry = new Registry();
    const gauge = new Gauge({ name: "reads_value", help: "which read", registers: [registry] });
    const { next, refresh } = steeredRefresh();
    const scrape = sharedExposition(refresh, registry);

    // Late, nothing rendered yet: rendered now, from the gauges as they stand.
    gauge.set(1);
    let land!: () => void;
    next({ landed: new Promise<void>((resolve) => (land = resolve)) });
    expect(valueIn(await scrape())).toBe("1");

    // The read lands (value 2): its body is rendered then; later changes are not in it.
    gauge.set(2);
    land();
    await new Promise<void>((resolve) => setImmediate(resolve));
    gauge.set(3);
    next({ landed: new Promise<void>(() => undefined) });
    // The rendering after the landing runs on zlib's threads: wait for it through the scrapes.
    let seen: string | undefined;
    for (let attempt = 0; attempt < 50 && seen !== "2"; attempt += 1) {
      seen = valueIn(await scrape());
      if (seen !== "2") next({ landed: new Promise<void>(() => undefined) });
    }
    expect(seen).toBe("2");

    // In time: rendered now, and that body is the one kept (the page of the last complete read).
    gauge.set(4);
    next({});
    expect(valueIn(await scrape())).toBe("4");
    next({ landed: new Promise<void>(() => undefined) });
    expect(valueIn(await scrape())).toBe("4");
  });

  it("after a scrape in time, a late one gets that scrape's body, not a rendering of its own", async () => {
    const registry = new Registry();
    const gauge = new Gauge({ name: "reads_value", help: "which read", registers: [registry] });
    const { next, refresh } = steeredRefresh();
    const scrape = sharedExposition(refresh, registry);
    gauge.set(1);
    next({});
    expect(valueIn(await scrape())).toBe("1");
    // Whatever moved since, a late scrape shows the page of the last complete read: rendering
    // anew would cost it the time it stopped waiting to save.
    gauge.set(2);
    next({ landed: new Promise<void>(() => undefined) });
    expect(valueIn(await scrape())).toBe("1");
  });

  it("tells each refresh how long the last page took to render, on the clock it is given", async () => {
    const registry = new Registry();
    new Gauge({ name: "reads_value", help: "which read", registers: [registry] }).set(1);
    const told: number[] = [];
    // Each reading of the clock is 40 ms later: a rendering, timed from start to end, takes 40.
    let clockMs = 1000;
    const scrape = sharedExposition(
      (renderMs) => {
        told.push(renderMs);
        return Promise.resolve({});
      },
      registry,
      () => (clockMs += 40),
    );
    expect(valueIn(await scrape())).toBe("1");
    expect(valueIn(await scrape())).toBe("1");
    // Nothing rendered before the first scrape; the second is told the first's rendering.
    expect(told).toEqual([0, 40]);
  });
});

/** A registry whose gauge counts its renderings: each rendering collects it once. */
function countingRegistry() {
  const registry = new Registry();
  const counted: { renderings: number; value: number; onCollect?: () => void } = {
    renderings: 0,
    value: 0,
  };
  new Gauge({
    name: "reads_value",
    help: "which read",
    registers: [registry],
    collect() {
      counted.renderings += 1;
      this.set(counted.value);
      counted.onCollect?.();
    },
  });
  return { registry, counted };
}

describe("a page written ahead when a read no scrape asked for lands", () => {
  it("answers the next late scrape at once, without a rendering of its own", async () => {
    const { registry, counted } = countingRegistry();
    const { next, refresh } = steeredRefresh();
    const scrape = sharedExposition(refresh, registry);
    counted.value = 1;
    await scrape.prepare();
    expect(counted.renderings).toBe(1);
    // The first scrape, late (a read of many groups): the page written ahead, nothing rendered.
    counted.value = 2;
    next({ landed: new Promise<void>(() => undefined) });
    expect(valueIn(await scrape())).toBe("1");
    expect(counted.renderings).toBe(1);
  });

  it("serves a scrape in time the page begun when its read landed, not a second rendering", async () => {
    const { registry, counted } = countingRegistry();
    counted.value = 7;
    // The scrape joined the background read: its landing writes the page ahead before the
    // scrape goes on, as the refresher's listener does.
    let prepared: Promise<void> = Promise.resolve();
    const scrape = sharedExposition(() => {
      prepared = scrape.prepare();
      return Promise.resolve({});
    }, registry);
    expect(valueIn(await scrape())).toBe("7");
    await prepared;
    expect(counted.renderings).toBe(1);
  });

  it("writes the new gauges after a rendering under way, not that rendering's page", async () => {
    const { registry, counted } = countingRegistry();
    const { next, refresh } = steeredRefresh();
    const scrape = sharedExposition(refresh, registry);
    counted.value = 1;
    next({});
    const collected = new Promise<void>((resolve) => (counted.onCollect = resolve));
    const first = scrape();
    await collected;
    // The read of a new list of groups lands while the scrape's page is being written.
    const ahead = scrape.prepare();
    counted.value = 2;
    expect(valueIn(await first)).toBe("1");
    await ahead;
    expect(counted.renderings).toBe(2);
    next({ landed: new Promise<void>(() => undefined) });
    expect(valueIn(await scrape())).toBe("2");
  });
});

/** Timers the test fires by hand. */
function handTimers() {
  const armed: (() => void)[] = [];
  return {
    armed,
    timers: {
      setTimeout: (callback: () => void) => armed.push(callback),
      clearTimeout: () => undefined,
    },
  };
}

/** A registry whose rendering waits, once `hold` is set, until the test releases it. */
function heldRegistry() {
  const registry = new Registry();
  const state: { value: number; hold?: Promise<void> } = { value: 0 };
  new Gauge({
    name: "reads_value",
    help: "which read",
    registers: [registry],
    async collect() {
      this.set(state.value);
      await state.hold;
    },
  });
  return { registry, state };
}

describe("a scrape in time whose page is written slower than the last", () => {
  it("gets the last kept page once answerWithinMs has passed; its own is kept for the next", async () => {
    const { registry, state } = heldRegistry();
    const { next, refresh } = steeredRefresh();
    const { armed, timers } = handTimers();
    const scrape = sharedExposition(refresh, registry, () => 0, {
      answerWithinMs: () => 500,
      timers,
    });
    state.value = 1;
    next({});
    // Nothing kept yet to fall back on: the first scrape waits for its page, with no timer.
    expect(valueIn(await scrape())).toBe("1");
    expect(armed).toHaveLength(0);
    // The next read came in time, but its page stalls (a loaded host): the wait runs out.
    let release!: () => void;
    state.hold = new Promise<void>((resolve) => (release = resolve));
    state.value = 2;
    next({});
    const answered = scrape();
    await waitFor(() => armed.length === 1, { what: "the scrape's answer timer" });
    armed[0]?.();
    expect(valueIn(await answered)).toBe("1");
    release();
    state.hold = undefined;
    // Its page, written meanwhile (zlib's threads), is the one a late scrape gets next.
    const lateScrape = async () => {
      next({ landed: new Promise<void>(() => undefined) });
      return valueIn(await scrape()) === "2";
    };
    await waitFor(lateScrape, { what: "the stalled page, kept once written" });
  });

  it("waits for its own page when answerWithinMs says so (no complete read shown: start, an outage)", async () => {
    const { registry, state } = heldRegistry();
    const { next, refresh } = steeredRefresh();
    const { armed, timers } = handTimers();
    const scrape = sharedExposition(refresh, registry, () => 0, {
      answerWithinMs: () => undefined,
      timers,
    });
    state.value = 1;
    next({});
    expect(valueIn(await scrape())).toBe("1");
    state.value = 2;
    next({});
    expect(valueIn(await scrape())).toBe("2");
    expect(armed).toHaveLength(0);
  });
});
