-- Spans' bucket rows of every group together are kept sorted from now on (issue 31, eleventh
-- session: storage/summary-group-spans.ts, those of at least SORTED_ROW_MIN values), so that a
-- summary reads only the few values around the rank it wants (storage/summary-medians.ts
-- rankThroughWindow). The spans built before were their months' rows one after the other: they are
-- deleted, and the next summary that serves their months makes them again. Spans are derived data.
DELETE FROM `summary_group_span_buckets`;--> statement-breakpoint
DELETE FROM `summary_group_span_heads`;
