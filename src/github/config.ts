import { toPkcs8Pem } from "./private-key";

/** The variables of contract section 17 ("Configuration"); secrets and vars alike arrive as strings. */
export interface GithubEnv {
  GITHUB_APP_ID?: string;
  GITHUB_APP_PRIVATE_KEY?: string;
  GITHUB_API_URL?: string;
  GITHUB_BACKFILL_DAYS?: string;
}

export const DEFAULT_API_URL = "https://api.github.com";
export const DEFAULT_BACKFILL_DAYS = 90;

/** Everything the client needs to act as the GitHub App. */
export interface GithubApp {
  appId: string;
  /** PKCS#8 PEM, whatever form the secret was given in. */
  privateKey: string;
  /** Without a trailing slash: `https://api.github.com` or a GitHub Enterprise Server's `https://HOST/api/v3`. */
  apiUrl: string;
  backfillDays: number;
}

export type GithubSync =
  | { kind: "on"; app: GithubApp }
  /** No app id or no key: webhooks still work, nothing is read from GitHub's API. */
  | { kind: "off"; missing: ("GITHUB_APP_ID" | "GITHUB_APP_PRIVATE_KEY")[] }
  /** Set but unusable: the operator meant sync to be on, so callers should log this as an error. */
  | { kind: "misconfigured"; reason: string };

/** Whether sync with GitHub's API is on, and the App's configuration when it is. */
export function githubSync(env: GithubEnv): GithubSync {
  const appId = env.GITHUB_APP_ID?.trim() ?? "";
  const key = env.GITHUB_APP_PRIVATE_KEY?.trim() ?? "";
  const missing: ("GITHUB_APP_ID" | "GITHUB_APP_PRIVATE_KEY")[] = [];
  if (appId === "") missing.push("GITHUB_APP_ID");
  if (key === "") missing.push("GITHUB_APP_PRIVATE_KEY");
  if (missing.length > 0) return { kind: "off", missing };

  // An App is named by its numeric id or its client id (`Iv1.…`, `Iv23…`); GitHub takes both as `iss`.
  if (!/^(\d+|Iv[0-9A-Za-z.]+)$/.test(appId)) {
    return { kind: "misconfigured", reason: "GITHUB_APP_ID must be the App's numeric id or its client id" };
  }
  const parsed = toPkcs8Pem(key);
  if (parsed.kind === "invalid") return { kind: "misconfigured", reason: `GITHUB_APP_PRIVATE_KEY: ${parsed.reason}` };

  const rawUrl = env.GITHUB_API_URL?.trim() || DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { kind: "misconfigured", reason: "GITHUB_API_URL is not a URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { kind: "misconfigured", reason: "GITHUB_API_URL must be http(s)" };
  }
  if (url.search || url.hash) return { kind: "misconfigured", reason: "GITHUB_API_URL must carry no query or fragment" };

  const daysText = env.GITHUB_BACKFILL_DAYS?.trim() || String(DEFAULT_BACKFILL_DAYS);
  const backfillDays = /^\d{1,5}$/.test(daysText) ? Number(daysText) : Number.NaN;
  if (!Number.isInteger(backfillDays) || backfillDays < 1 || backfillDays > 3650) {
    return { kind: "misconfigured", reason: "GITHUB_BACKFILL_DAYS must be a whole number of days from 1 to 3650" };
  }

  return {
    kind: "on",
    app: { appId, privateKey: parsed.pkcs8, apiUrl: `${url.origin}${url.pathname.replace(/\/+$/, "")}`, backfillDays },
  };
}
