import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, explain, type SessionInfo, signOut, toLanding } from "./api";

/** The frame of every signed-in page: who is signed in, where one can go, sign-out. */
export function Layout({ session, title, children }: { session: SessionInfo; title: string; children: ComponentChildren }) {
  const [error, setError] = useState("");
  /** `everywhere`: every session of the person ends (other browsers and devices too), not only this one. */
  const out = async (everywhere: boolean) => {
    try {
      await (everywhere ? api("POST", "/auth/sign-out-everywhere") : signOut());
      toLanding();
    } catch (e) {
      setError(explain(e));
    }
  };
  const here = window.location.pathname;
  return (
    <>
      <header class="top">
        <a class="brand" href="/">
          PR review
        </a>
        <nav aria-label="Main">
          <a href="/app/keys" aria-current={here === "/app/keys" ? "page" : undefined}>
            API keys
          </a>
          <a href="/app/orgs" aria-current={here.startsWith("/app/orgs") ? "page" : undefined}>
            Organizations
          </a>
        </nav>
        <div class="who">
          <span>
            Signed in as <strong>{session.user.githubLogin}</strong>
          </span>
          <button type="button" class="secondary" onClick={() => out(false)}>
            Sign out
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => out(true)}
            title="Ends your sessions in every browser and on every device"
          >
            Sign out everywhere
          </button>
        </div>
      </header>
      <main id="main">
        <h1>{title}</h1>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {children}
      </main>
    </>
  );
}

/** A line that screen readers announce when it changes. */
export function Notice({ kind, text }: { kind: "error" | "ok"; text: string }) {
  if (!text) return null;
  return (
    <p class={kind} role={kind === "error" ? "alert" : "status"}>
      {text}
    </p>
  );
}

/**
 * A table that scrolls sideways on a narrow screen: a focusable region (so the keyboard scrolls it
 * too), named, and with a visible hint while columns are out of sight.
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  const box = useRef<HTMLElement>(null);
  const [hidden, setHidden] = useState(false);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setHidden(el.scrollWidth > el.clientWidth + 1);
    measure();
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    if (el.firstElementChild) watch.observe(el.firstElementChild);
    return () => watch.disconnect();
  }, []);
  return (
    <>
      {hidden && (
        <p class="scroll-hint" data-testid="scroll-hint">
          <span aria-hidden="true">⇆ </span>More columns to the right: scroll the table sideways (or focus it and use the arrow
          keys).
        </p>
      )}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1). */}
      <section class="table-wrap" aria-label={label} tabIndex={0} ref={box}>
        {children}
      </section>
    </>
  );
}

/**
 * Cursor paging (the members list, the export's rows): "Previous page" while a page is behind the
 * first, "Next page" while the answer names a next cursor. `cursors` is the stack of the pages'
 * cursors (null for the first); `go` is given the new stack.
 */
export function Pager({
  cursors,
  next,
  go,
}: {
  cursors: (string | null)[];
  next: string | null | undefined;
  go: (cursors: (string | null)[]) => void;
}) {
  return (
    <div class="actions">
      {cursors.length > 1 && (
        <button type="button" class="secondary" onClick={() => go(cursors.slice(0, -1))}>
          Previous page
        </button>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => go([...cursors, next])}>
          Next page
        </button>
      )}
    </div>
  );
}
