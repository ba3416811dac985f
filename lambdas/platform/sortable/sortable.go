// Package sortable formats values so that DynamoDB's byte-wise string order
// is their natural order: sort keys and index sort keys compare as strings.
package sortable

import "time"

// Layout is fixed-width UTC with microseconds. Fixed width matters:
// RFC3339Nano drops trailing zeros, so "…25.3Z" sorts after "…25.34Z", and
// second precision makes items of the same second tie.
const Layout = "2006-01-02T15:04:05.000000Z"

// Time formats t in Layout.
func Time(t time.Time) string { return t.UTC().Format(Layout) }

// ParseTime parses a Layout timestamp.
func ParseTime(s string) (time.Time, error) { return time.Parse(Layout, s) }
