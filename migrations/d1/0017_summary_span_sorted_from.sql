-- A span's rows of every group together of at least `sorted_from` values are kept sorted (issue 31,
-- eleventh session: storage/summary-group-spans.ts), so that a summary reads only the few values
-- around the rank it wants (storage/summary-medians.ts rankThroughWindow). Null: none is, as in
-- every span made before (their rows are their months' rows one after the other) and in any a
-- Worker of before makes while its deploy follows this migration; such spans are read whole.
ALTER TABLE `summary_group_span_heads` ADD `sorted_from` integer;
