import { describe, expect, it } from "vitest";
import { neutralizeFormula } from "../../src/analytics/csv";

describe("CSV formula neutralisation (contract section 10): what a spreadsheet may run gets a leading single quote", () => {
  it.each([
    ["=1+1"],
    ["+1"],
    ["-1"],
    ["@SUM(A1)"],
    ["\tTab"],
    ["\rCR"],
    // Spreadsheets skip leading blanks and invisible characters before a formula.
    ["\n=1+1"],
    [" =1+1"],
    ["  +1"],
    ["\u00a0=1+1"],
    ["\u200b=1+1"],
    ["\ufeff=1+1"],
    ["\u2060@x"],
    [" \u200b\u00a0-2"],
    // Full-width and small forms that some spreadsheets fold to the ASCII operators.
    ["\uff1d1+1"],
    ["\uff0b1"],
    ["\uff0d1"],
    ["\uff20x"],
    ["\ufe661+1"],
    ["\ufe621"],
    ["\ufe631"],
    ["\ufe6bx"],
    [" \uff1d1"],
  ])("%j is neutralised", (text) => {
    expect(neutralizeFormula(text)).toBe(`'${text}`);
  });

  it.each([["alice"], ["a=b"], ["safe-name"], [" alice"], ["\u00a0bob"], ["ünïcødé ✓"], [""], ["1-2"]])(
    "%j is left as it is",
    (text) => {
      expect(neutralizeFormula(text)).toBe(text);
    },
  );
});
