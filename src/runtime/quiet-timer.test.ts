import { afterEach, describe, expect, it } from "vitest";
import { QuietTimer, runningClockCount } from "./quiet-timer.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("QuietTimer", () => {
  afterEach(() => expect(runningClockCount()).toBe(0));

  it("tells its listener once a wait outlasts the limit, and not while waits keep ending in time", async () => {
    const heard: number[] = [];
    const clock = new QuietTimer({ quiet: (limitMs) => heard.push(limitMs) });
    for (let i = 0; i < 5; i++) {
      clock.wait(40);
      await pause(10);
      clock.pause();
    }
    expect(heard).toEqual([]);
    clock.wait(40);
    await pause(120);
    expect(heard).toEqual([40]); // once: a wait that ran out is over
    clock.stop();
  });

  it("keeps going for the other clocks when one listener throws", async () => {
    const heard: string[] = [];
    const failing = new QuietTimer({
      quiet: () => {
        throw new Error("a stream's own failure");
      },
    });
    const healthy = new QuietTimer({ quiet: () => heard.push("healthy") });
    failing.wait(20);
    healthy.wait(20);
    await pause(100);
    expect(heard).toEqual(["healthy"]);
    healthy.stop();
    failing.stop();
  });
});
