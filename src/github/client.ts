import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import Bottleneck from "bottleneck/light.js";
import { log } from "../lib/log";
import type { GithubApp } from "./config";
import { GithubError } from "./errors";
import { tokenCache } from "./token-cache";

/**
 * The GitHub App's client for one installation: Octokit core with App authentication (App JWT for
 * `/app/...`, installation tokens for the rest, reused across requests), every page of list calls,
 * GitHub's primary and secondary rate limits honoured by waiting, and bounded retries on 5xx.
 */

/** What a call cost: HTTP requests sent (token requests and retries included) and rate points. */
export interface GithubUsage {
  calls: number;
  /**
   * Rate points: each REST request made with the installation token costs one (GitHub's REST rule);
   * a GraphQL query costs what GitHub reports in its `rateLimit { cost }`, added by the call.
   */
  points: number;
}

export interface ClientOptions {
  /** The longest rate-limit wait done in place; a longer one ends the call with `rate_limited`. Default 300 s. */
  maxWaitSeconds?: number;
  /** Rate-limit answers waited out in a row for one request before giving up with `rate_limited`. Default 10. */
  maxLimitRetries?: number;
  /** Retries of a 5xx or network failure. Default 3. */
  retries?: number;
  /** Backoff unit of those retries: waits of 1, 4, 9 units. Default 1000 ms (tests shorten it). */
  retryBaseMs?: number;
}

const GithubOctokit = Octokit.plugin(paginateRest, retry, throttling);
export type InstallationOctokit = InstanceType<typeof GithubOctokit>;

/** One installation of the App, as the typed calls take it. */
export interface GithubInstallation {
  app: GithubApp;
  installationId: number;
  options?: ClientOptions;
}

const quiet = () => {};
/** Octokit's own warnings and errors, as the service's log lines. */
const octokitLine = (level: "warn" | "error") => (message: string) => log[level]("GitHub client message", { message });

/**
 * Runs `work` with a fresh Octokit for the installation and reports what it cost. A fresh client per
 * call keeps the counts exact under concurrency; tokens come from the per-isolate cache and the
 * concurrency limiter is shared per installation (throttling's `id`), so nothing is lost by it.
 * Failures become a `GithubError` (kind, status, the cost so far).
 */
export async function withInstallation<T>(
  target: GithubInstallation,
  work: (octokit: InstallationOctokit, usage: GithubUsage) => Promise<T>,
): Promise<{ data: T; usage: GithubUsage }> {
  const { app, installationId, options = {} } = target;
  const usage: GithubUsage = { calls: 0, points: 0 };
  const maxWait = options.maxWaitSeconds ?? 300;
  const maxLimitRetries = options.maxLimitRetries ?? 10;
  let refusedWait: number | undefined;

  const waitOrRefuse =
    (kind: string) => (retryAfter: number, request: { method: string; url: string }, _o: unknown, retryCount: number) => {
      if (retryAfter <= maxWait && retryCount < maxLimitRetries) {
        log.warn(`GitHub ${kind}: waiting`, { retryAfter, request: `${request.method} ${request.url}`, installationId });
        return true;
      }
      refusedWait = retryAfter;
      return false;
    };

  const limits = limiters();
  const octokit = new GithubOctokit({
    baseUrl: app.apiUrl,
    userAgent: "pr-review-service",
    authStrategy: createAppAuth,
    auth: {
      appId: /^\d+$/.test(app.appId) ? Number(app.appId) : app.appId,
      privateKey: app.privateKey,
      installationId,
      cache: tokenCache(`${app.apiUrl}|${app.appId}`),
    },
    request: { fetch: meteredFetch(usage) },
    log: { debug: quiet, info: quiet, warn: octokitLine("warn"), error: octokitLine("error") },
    throttle: {
      id: `${app.apiUrl}|${app.appId}|${installationId}`,
      ...limits,
      onRateLimit: waitOrRefuse("rate limit"),
      onSecondaryRateLimit: waitOrRefuse("secondary rate limit"),
    },
    retry: {
      retries: options.retries ?? 3,
      retryAfterBaseValue: options.retryBaseMs ?? 1000,
      // Limits (403, 429) are the throttling plugin's: it waits what GitHub says instead of guessing.
      doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451],
    },
  });

  try {
    return { data: await work(octokit, usage), usage };
  } catch (error) {
    throw asGithubError(error, usage, refusedWait);
  } finally {
    release(limits);
  }
}

/**
 * The throttling plugin's limiters, new for every client. Its defaults are module-level, shared by
 * every Octokit of the isolate: a request's job could then be run (and its promise settled) by
 * another request's invocation, which workerd refuses ("Cannot perform I/O on behalf of a different
 * request"; seen when a webhook signal and a sync step of one installation ran at once). Calls
 * send their requests one at a time, so nothing is lost by limiting per client.
 */
function limiters() {
  const timeout = 120_000;
  return {
    global: new Bottleneck.Group({ id: "octokit-global", maxConcurrent: 10, timeout }),
    auth: new Bottleneck.Group({ id: "octokit-auth", maxConcurrent: 1, timeout }),
    search: new Bottleneck.Group({ id: "octokit-search", maxConcurrent: 1, minTime: 2000, timeout }),
    write: new Bottleneck.Group({ id: "octokit-write", maxConcurrent: 1, minTime: 1000, timeout }),
    notifications: new Bottleneck.Group({ id: "octokit-notifications", maxConcurrent: 1, minTime: 3000, timeout }),
    retryLimiter: new Bottleneck(),
  };
}

/**
 * Stops the groups' cleanup timers. Each `Bottleneck.Group` starts a `setInterval` that nothing
 * clears, and workerd allows an isolate 10,000 active timers: without this, 2,000 calls in one
 * isolate (five groups each) make every later call throw `QuotaExceededError` (found by
 * `npm run bench:sync` at 2,000 repositories: one call per page of pull requests).
 */
function release(limits: ReturnType<typeof limiters>): void {
  for (const group of [limits.global, limits.auth, limits.search, limits.write, limits.notifications]) {
    clearInterval((group as unknown as { interval?: ReturnType<typeof setInterval> }).interval);
  }
}

/**
 * Counts every HTTP request Octokit sends (including auth-app's token requests, which no plugin
 * sees), and a point for each REST request with the installation token. A GraphQL query's points
 * are its reported cost, which the call adds once it has the answer (`/graphql`, `/api/graphql`).
 */
function meteredFetch(usage: GithubUsage): typeof fetch {
  return (input, init) => {
    usage.calls++;
    const url = input instanceof Request ? input.url : String(input);
    const graphql = /\/graphql$/.test(new URL(url).pathname);
    if (!graphql && /^token /i.test(new Headers(init?.headers).get("authorization") ?? "")) usage.points++;
    return fetch(input, init);
  };
}

/** A GraphQL answer of GitHub's primary limit: 200 with a `RATE_LIMITED` error (as thrown by Octokit). */
function graphqlRateLimited(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const errors =
    ("errors" in error ? error.errors : undefined) ??
    ("data" in error && typeof error.data === "object" && error.data && "errors" in error.data ? error.data.errors : undefined);
  return Array.isArray(errors) && errors.some((e) => typeof e === "object" && e !== null && e.type === "RATE_LIMITED");
}

function asGithubError(error: unknown, usage: GithubUsage, refusedWait: number | undefined): GithubError {
  if (error instanceof GithubError) return error;
  const cost = { calls: usage.calls, points: usage.points };
  const status = typeof error === "object" && error && "status" in error ? Number(error.status) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (refusedWait !== undefined && (status === 403 || status === 429 || graphqlRateLimited(error))) {
    return new GithubError("rate_limited", `GitHub rate limit: retry in ${refusedWait} s`, {
      status,
      retryAfterSeconds: refusedWait,
      ...cost,
    });
  }
  if (status === 401) return new GithubError("unauthorized", message, { status, ...cost });
  if (status === 403) return new GithubError("forbidden", message, { status, ...cost });
  if (status === 404 || status === 410) return new GithubError("not_found", message, { status, ...cost });
  if (status !== undefined && status >= 500) return new GithubError("unavailable", message, { status, ...cost });
  return new GithubError("failed", message, { status, ...cost });
}
