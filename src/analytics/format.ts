/**
 * Which representation of the analytics page a request asks for (contract section 10).
 *
 * `format` decides when given. Without it, `Accept` picks CSV only when it names `text/csv`
 * explicitly with a q-value above 0 and above the one it gives JSON (`application/json`, else
 * `application/*`, else `*\/*`; a type the header does not cover counts 0). Everything else (no
 * header, `*\/*`, a tie such as `text/csv, application/json`, types the service cannot produce)
 * is JSON, the default: the export never answers 406.
 */
export type ExportFormat = "json" | "csv";

export function chooseFormat(format: ExportFormat | undefined, accept: string | null): ExportFormat {
  if (format !== undefined) return format;
  if (accept === null) return "json";
  const ranges = parseAccept(accept);
  const q = (...types: string[]) => {
    for (const type of types) {
      const range = ranges.find((r) => r.type === type);
      if (range) return range.q;
    }
    return 0;
  };
  const csv = q("text/csv");
  return csv > 0 && csv > q("application/json", "application/*", "*/*") ? "csv" : "json";
}

/** `type/subtype;param;q=0.5, ...` → lower-cased media ranges with their q (1 when absent; a malformed q drops the range). */
function parseAccept(header: string): { type: string; q: number }[] {
  return header.split(",").flatMap((part) => {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (!type) return [];
    const qParam = params.find((p) => /^q\s*=/.test(p));
    const value = qParam === undefined ? 1 : Number(qParam.replace(/^q\s*=\s*/, ""));
    // RFC 9110 qvalue: 0 to 1 with up to three decimals; anything else is not a preference at all.
    const valid = qParam === undefined || /^q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(qParam);
    return valid && Number.isFinite(value) ? [{ type, q: value }] : [];
  });
}
