// Sortable values: formats under which DynamoDB's byte-wise string order
// is their natural order: sort keys and index sort keys compare as strings.

package ddb

import "time"

// SortableLayout is fixed-width UTC with microseconds. Fixed width matters:
// RFC3339Nano drops trailing zeros, so "…25.3Z" sorts after "…25.34Z", and
// second precision makes items of the same second tie.
const SortableLayout = "2006-01-02T15:04:05.000000Z"

// SortableTime formats t in Layout.
func SortableTime(t time.Time) string { return t.UTC().Format(SortableLayout) }

// ParseSortableTime parses a Layout timestamp.
func ParseSortableTime(s string) (time.Time, error) { return time.Parse(SortableLayout, s) }
