import { PERIODS, type Period } from "../analytics-window";
import { fits, MAX_NAMES } from "../dashboard-figures";

/**
 * What the dashboard's URL holds, so that a view can be linked, reloaded and walked with back and
 * forward: `?window=30&repo=api,web&author=ada,max&per=month`, or `?window=custom&start=…&end=…`. Lists are
 * comma-separated as the API takes them (contract section 21); repository names and GitHub logins
 * hold no comma.
 */
export interface View {
  window: "" | "7" | "30" | "90" | "365" | "custom";
  start: string;
  end: string;
  repos: string[];
  authors: string[];
  /** The charts' time grouping (the summary's `groupBy`); `week` unless the URL says `per=day` or `per=month`. */
  per: Period;
}
export const PRESETS = ["7", "30", "90", "365"] as const;
const DAY = 86_400_000;

const list = (value: string | null): string[] => {
  const names = (value ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  return [...new Set(names)];
};

export function readView(): View {
  const q = new URLSearchParams(window.location.search);
  const w = q.get("window") ?? "";
  const known = w === "custom" || (PRESETS as readonly string[]).includes(w);
  return {
    window: known ? (w as View["window"]) : "",
    start: q.get("start") ?? "",
    end: q.get("end") ?? "",
    repos: list(q.get("repo")),
    authors: list(q.get("author")),
    per: (PERIODS as readonly string[]).includes(q.get("per") ?? "") ? (q.get("per") as Period) : "week",
  };
}

/** The URL's query for a view (commas left readable). */
export function viewQuery(view: View): string {
  const q = new URLSearchParams();
  if (view.window) q.set("window", view.window);
  if (view.window === "custom") {
    if (view.start) q.set("start", view.start);
    if (view.end) q.set("end", view.end);
  }
  if (view.repos.length > 0) q.set("repo", view.repos.join(","));
  if (view.authors.length > 0) q.set("author", view.authors.join(","));
  if (view.per !== "week") q.set("per", view.per);
  const s = q.toString().replace(/%2C/g, ",");
  return s ? `?${s}` : "";
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The API's window for a view: the last N UTC days including today (whole days, so a link shows
 * the same window all day), custom dates as given, or none (the export's default window).
 */
export function windowParams(org: string, view: View, now = Date.now()): URLSearchParams {
  const q = new URLSearchParams({ org });
  if (view.window === "custom") {
    if (view.start) q.set("startDate", view.start);
    if (view.end) q.set("endDate", view.end);
  } else if (view.window) {
    q.set("startDate", utcDay(now - (Number(view.window) - 1) * DAY));
    q.set("endDate", utcDay(now));
  }
  return q;
}

/** The API's parameters for a view: its window, and the repository and author lists. */
export function apiParams(org: string, view: View, now = Date.now()): URLSearchParams {
  const q = windowParams(org, view, now);
  if (view.repos.length > 0) q.set("repo", view.repos.join(","));
  if (view.authors.length > 0) q.set("author", view.authors.join(","));
  return q;
}

/**
 * A multi-select as a disclosure of labelled checkboxes (keyboard: Tab to the summary, Enter or
 * Space opens it, Tab and Space through the boxes). None checked means every one. A box that would
 * break the API's bounds (20 names, 255 characters) is disabled, and the limit is said.
 */
export function Picker({
  id,
  label,
  every,
  choices,
  chosen,
  onChange,
}: {
  id: string;
  /** "Repositories" */
  label: string;
  /** "All repositories you can see" */
  every: string;
  choices: readonly string[];
  chosen: readonly string[];
  onChange: (next: string[]) => void;
}) {
  const options = [...chosen.filter((c) => !choices.includes(c)), ...choices];
  const toggle = (name: string, on: boolean) => onChange(on ? [...chosen, name] : chosen.filter((c) => c !== name));
  const full = chosen.length >= MAX_NAMES;
  return (
    <details class="picker" id={id}>
      <summary>
        <span class="picker-label">{label}</span>{" "}
        <span class="picker-value" data-testid={`${id}-value`}>
          {chosen.length === 0 ? every : chosen.length <= 3 ? chosen.join(", ") : `${chosen.length} chosen`}
        </span>
      </summary>
      <fieldset>
        <legend class="sr-only">{label}</legend>
        {options.length === 0 && <p class="muted">None in this window.</p>}
        <ul>
          {options.map((name) => {
            const on = chosen.includes(name);
            return (
              <li key={name}>
                <label>
                  <input
                    type="checkbox"
                    checked={on}
                    disabled={!on && !fits(chosen, name)}
                    onChange={(e) => toggle(name, e.currentTarget.checked)}
                  />{" "}
                  {name}
                </label>
              </li>
            );
          })}
        </ul>
        {full && <p class="muted">At most {MAX_NAMES} can be chosen.</p>}
        {chosen.length > 0 && (
          <button type="button" class="secondary" onClick={() => onChange([])}>
            {every}
          </button>
        )}
      </fieldset>
    </details>
  );
}
