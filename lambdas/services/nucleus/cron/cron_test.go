package cron

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// Fires against wall-clock expectations, written out in UTC: across DST
// gaps and overlaps in zones with 60- and 30-minute shifts, the day
// fields of both forms, and the window's bounds.
func TestCronFires(t *testing.T) {
	tests := []struct {
		name, expr, zone, after, until string
		want                           []string
	}{
		// America/New_York springs forward 2026-03-08 02:00 EST → 03:00 EDT.
		{"NY gap fires at its end", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", "2026-03-09T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"NY times in one gap fire once", "*/15 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z"}},
		{"NY gap and 03:00 are one fire", "0 2,3 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z"}},
		{"NY before and after the gap", "0 1,4 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T12:00:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-08T08:00:00Z"}},
		// New York falls back 2026-11-01 02:00 EDT → 01:00 EST.
		{"NY overlap fires once, first occurrence", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-01T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z"}},
		{"NY every 30 minutes through the overlap", "*/30 1-2 * * *", "America/New_York", "2026-11-01T00:00:00Z", "2026-11-01T12:00:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"}},
		{"NY office hours across the change", "0 8 * * MON-FRI", "America/New_York", "2026-03-05T00:00:00Z", "2026-03-10T00:00:00Z",
			[]string{"2026-03-05T13:00:00Z", "2026-03-06T13:00:00Z", "2026-03-09T12:00:00Z"}},
		// Europe/Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
		{"Berlin gap", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z"}},
		{"Berlin overlap", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z"}},
		{"Berlin 6-field form", "0 18 ? * MON-FRI *", "Europe/Berlin", "2026-10-23T00:00:00Z", "2026-10-27T00:00:00Z",
			[]string{"2026-10-23T16:00:00Z", "2026-10-26T17:00:00Z"}},
		// Australia/Lord_Howe shifts by 30 minutes: 2026-04-05 02:00 (+11)
		// → 01:30 (+10:30); 2026-10-04 02:00 (+10:30) → 02:30 (+11).
		{"Lord Howe 30-minute overlap", "45 1 * * *", "Australia/Lord_Howe", "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z",
			[]string{"2026-04-04T14:45:00Z"}},
		{"Lord Howe 30-minute gap", "15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z",
			[]string{"2026-10-03T15:30:00Z"}},
		{"Lord Howe just after the gap", "30 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z",
			[]string{"2026-10-03T15:30:00Z"}},
		{"Lord Howe 02:00 exists once more after the overlap", "0 2 * * *", "Australia/Lord_Howe", "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z",
			[]string{"2026-04-04T15:30:00Z"}},
		// Day fields.
		{"crontab: both day fields restricted is OR", "0 8 13 * FRI", "UTC", "2026-11-09T00:00:00Z", "2026-11-21T00:00:00Z",
			[]string{"2026-11-13T08:00:00Z", "2026-11-20T08:00:00Z"}},
		{"crontab: day-of-week 1 is Monday", "0 9 * * 1", "UTC", "2026-11-22T00:00:00Z", "2026-11-30T00:00:00Z",
			[]string{"2026-11-23T09:00:00Z"}},
		{"crontab: 0 and 7 are Sunday", "0 9 * * 0,7", "UTC", "2026-11-22T00:00:00Z", "2026-11-30T00:00:00Z",
			[]string{"2026-11-22T09:00:00Z", "2026-11-29T09:00:00Z"}},
		{"crontab: a day field starting with * makes it AND (odd-day Mondays)", "0 9 */2 * MON", "UTC", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z",
			[]string{"2026-11-09T09:00:00Z", "2026-11-23T09:00:00Z"}},
		{"eventbridge: day-of-week 1 is Sunday", "0 9 ? * 1 *", "UTC", "2026-11-22T00:00:00Z", "2026-11-30T00:00:00Z",
			[]string{"2026-11-22T09:00:00Z", "2026-11-29T09:00:00Z"}},
		{"eventbridge: first Monday", "0 8 ? * 2#1 *", "UTC", "2026-11-01T00:00:00Z", "2027-01-01T00:00:00Z",
			[]string{"2026-11-02T08:00:00Z", "2026-12-07T08:00:00Z"}},
		{"eventbridge: last Friday", "0 18 ? * 6L *", "UTC", "2026-11-01T00:00:00Z", "2027-01-01T00:00:00Z",
			[]string{"2026-11-27T18:00:00Z", "2026-12-25T18:00:00Z"}},
		{"eventbridge: L alone is Saturday", "0 7 ? * L *", "UTC", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z",
			[]string{"2026-11-28T07:00:00Z"}},
		{"crontab: L alone is Saturday", "0 7 ? * L", "UTC", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z",
			[]string{"2026-11-28T07:00:00Z"}},
		{"nearest weekday to a Sunday 15th", "0 8 15W * ? *", "UTC", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z",
			[]string{"2026-11-16T08:00:00Z"}},
		{"nearest weekday to a Saturday 1st stays in the month", "0 8 1W * ? *", "UTC", "2026-08-01T00:00:00Z", "2026-09-01T00:00:00Z",
			[]string{"2026-08-03T08:00:00Z"}},
		{"last day, and last weekday", "0 0 L,LW * ? *", "UTC", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z",
			[]string{"2026-10-30T00:00:00Z", "2026-10-31T00:00:00Z"}},
		{"day 31 skips short months", "0 0 31 * ?", "UTC", "2026-04-01T00:00:00Z", "2026-08-01T00:00:00Z",
			[]string{"2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"year field", "0 8 ? * MON 2027", "UTC", "2026-12-25T00:00:00Z", "2027-01-05T00:00:00Z",
			[]string{"2027-01-04T08:00:00Z"}},
		{"a/n runs to the end of the range", "5/20 10 * * *", "UTC", "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z",
			[]string{"2026-11-26T10:05:00Z", "2026-11-26T10:25:00Z", "2026-11-26T10:45:00Z"}},
		{"month names", "0 0 1 jan,JUL *", "UTC", "2026-01-01T00:00:00Z", "2026-12-31T00:00:00Z",
			[]string{"2026-07-01T00:00:00Z"}},
		// The window is (after, until].
		{"after is excluded, until included", "0 * * * *", "UTC", "2026-11-26T08:00:00Z", "2026-11-26T10:00:00Z",
			[]string{"2026-11-26T09:00:00Z", "2026-11-26T10:00:00Z"}},
		{"empty window", "* * * * *", "UTC", "2026-11-26T08:00:00Z", "2026-11-26T08:00:00Z", nil},
		{"zone ahead of UTC across midnight", "30 0 * * *", "Asia/Kolkata", "2026-11-25T18:00:00Z", "2026-11-25T20:00:00Z",
			[]string{"2026-11-25T19:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.expr)
			require.NoError(t, err)
			loc, err := time.LoadLocation(tt.zone)
			require.NoError(t, err)
			var got []string
			for _, f := range c.Fires(loc, utc(tt.after), utc(tt.until)) {
				got = append(got, f.UTC().Format(time.RFC3339))
			}
			assert.Equal(t, tt.want, got, "%s in %s over (%s, %s]", tt.expr, tt.zone, tt.after, tt.until)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"0 8 * *":         "want 5 fields",
		"0 8 ? * 0 *":     "1-7 from SUN",
		"0 8 * * MON *":   "exactly one of day-of-month and day-of-week must be ?",
		"? 8 * * *":       "? is allowed only",
		"0 8 * * 5-1":     "backwards",
		"0 8 ? * MON#6 *": "occurrence must be 1-5",
		"0 8 32W * ? *":   "day-of-month",
	} {
		_, err := Parse(expr)
		assert.ErrorContains(t, err, want, "Parse(%q)", expr)
	}
}
