// Package cron parses cron expressions in the two forms people write for
// AWS schedules and lists when they fire in a time zone's wall time,
// daylight saving changes included. Nucleus checks and runs its schedules'
// start_cron and end_cron with it (docs/schemas/nucleus.md, Decision 20).
package cron

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Expr is a compiled cron expression in either form:
//
//   - 5 fields, crontab: minute hour day-of-month month day-of-week, with
//     day-of-week 0-7 (0 and 7 are Sunday). When both day fields are
//     restricted (neither starts with * nor is ?), a day matches if either
//     matches, as in cron(8).
//   - 6 fields, EventBridge Scheduler's cron(): the same plus year, with
//     day-of-week 1-7 counted from Sunday, and exactly one day field ?.
//
// Both take names (JAN, MON), lists, ranges, steps, and L, LW, nW in
// day-of-month and L, nL, n#k in day-of-week. An Expr is evaluated in wall
// time of a time zone by Fires.
type Expr struct {
	minute [60]bool
	hour   [24]bool
	dom    [32]bool // 1-31
	month  [13]bool // 1-12
	dow    [7]bool  // time.Weekday
	// year is nil in the 5-field form (every year).
	year []bool // year-yearMin

	lastDay, lastWeekday bool
	nearestWeekday       []int
	lastOf               [7]bool  // nL: last <weekday> of the month
	nth                  [][2]int // n#k: <weekday>, occurrence 1-5
	domRestricted        bool     // day-of-month neither * … nor ?
	dowRestricted        bool     // day-of-week neither * … nor ?
	eventBridge          bool     // the 6-field form
}

const (
	yearMin = 1970
	yearMax = 2199
)

type field struct {
	name     string
	min, max int
	names    []string // names[i] is min+i
	dom, dow bool     // allow ?, L, W / ?, L, #
	// weekday maps a day-of-week value to time.Weekday.
	weekday func(int) int
}

var months = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}

var (
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31, dom: true}
	monthField  = field{name: "month", min: 1, max: 12, names: months}
	// crontab: 0-7, Sunday both 0 and 7.
	dowCrontab = field{name: "day-of-week", min: 0, max: 7, dow: true,
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}, weekday: func(v int) int { return v % 7 }}
	// EventBridge: 1-7 from Sunday.
	dowEventBridge = field{name: "day-of-week", min: 1, max: 7, dow: true,
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}, weekday: func(v int) int { return v - 1 }}
	yearField = field{name: "year", min: yearMin, max: yearMax}
)

// Parse compiles a cron expression; the error names the field at fault.
// It checks syntax and ranges, not that the expression ever fires.
func Parse(expr string) (*Expr, error) {
	parts := strings.Fields(expr)
	if len(parts) != 5 && len(parts) != 6 {
		return nil, fmt.Errorf("want 5 fields (minute hour day-of-month month day-of-week) or 6 (plus year), got %d", len(parts))
	}
	c := &Expr{eventBridge: len(parts) == 6}
	dow := dowCrontab
	if c.eventBridge {
		dow = dowEventBridge
	}
	fields := []field{minuteField, hourField, domField, monthField, dow, yearField}
	sets := make([][]bool, len(parts))
	for i, p := range parts {
		f := fields[i]
		sets[i] = make([]bool, f.max-f.min+1)
		if err := f.parse(p, sets[i], c); err != nil {
			if f.dow && c.eventBridge {
				err = fmt.Errorf("%w (with a year field, day-of-week counts 1-7 from SUN, as in EventBridge)", err)
			}
			return nil, fmt.Errorf("%s %q: %w", f.name, p, err)
		}
	}
	if c.eventBridge && (parts[2] == "?") == (parts[4] == "?") {
		// EventBridge's rule: one of the two day fields must be "?".
		return nil, errors.New("with a year field, exactly one of day-of-month and day-of-week must be ?")
	}
	copy(c.minute[:], sets[0])
	copy(c.hour[:], sets[1])
	copy(c.dom[1:], sets[2])
	copy(c.month[1:], sets[3])
	for i, on := range sets[4] {
		if on {
			c.dow[dow.weekday(dow.min+i)] = true
		}
	}
	if c.eventBridge {
		c.year = sets[5]
	}
	c.domRestricted = !strings.HasPrefix(parts[2], "*") && parts[2] != "?"
	c.dowRestricted = !strings.HasPrefix(parts[4], "*") && parts[4] != "?"
	return c, nil
}

func (f field) parse(s string, set []bool, c *Expr) error {
	if s == "?" {
		if !f.dom && !f.dow {
			return errors.New("? is allowed only in day-of-month and day-of-week")
		}
		for i := range set {
			set[i] = true
		}
		return nil
	}
	for item := range strings.SplitSeq(s, ",") {
		if err := f.item(item, set, c); err != nil {
			return err
		}
	}
	return nil
}

func (f field) item(s string, set []bool, c *Expr) error {
	switch {
	case s == "":
		return errors.New("empty list element")
	case f.dom && s == "L":
		c.lastDay = true
		return nil
	case f.dom && s == "LW":
		c.lastWeekday = true
		return nil
	case f.dow && s == "L":
		// Alone in day-of-week, L is the last day of the week: Saturday.
		set[len(set)-1-boolInt(f.min == 0)] = true
		return nil
	case f.dom && strings.HasSuffix(s, "W"):
		n, err := f.value(strings.TrimSuffix(s, "W"))
		if err != nil {
			return err
		}
		c.nearestWeekday = append(c.nearestWeekday, n)
		return nil
	case f.dow && strings.HasSuffix(s, "L") && len(s) > 1:
		n, err := f.value(strings.TrimSuffix(s, "L"))
		if err != nil {
			return err
		}
		c.lastOf[f.weekday(n)] = true
		return nil
	case f.dow && strings.Contains(s, "#"):
		day, nth, _ := strings.Cut(s, "#")
		n, err := f.value(day)
		if err != nil {
			return err
		}
		k, err := strconv.Atoi(nth)
		if err != nil || k < 1 || k > 5 {
			return fmt.Errorf("#%s: the occurrence must be 1-5", nth)
		}
		c.nth = append(c.nth, [2]int{f.weekday(n), k})
		return nil
	}
	rng, stepText, hasStep := strings.Cut(s, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 || n > f.max {
			return fmt.Errorf("step %q must be a number from 1 to %d", stepText, f.max)
		}
		step = n
	}
	lo, hi := f.min, f.max
	if rng != "*" {
		a, b, isRange := strings.Cut(rng, "-")
		var err error
		if lo, err = f.value(a); err != nil {
			return err
		}
		switch {
		case isRange:
			if hi, err = f.value(b); err != nil {
				return err
			}
			if lo > hi {
				return fmt.Errorf("range %s is backwards", rng)
			}
		case !hasStep:
			// A single value; "a/n" runs from a to the end.
			hi = lo
		}
	}
	for v := lo; v <= hi; v += step {
		set[v-f.min] = true
	}
	return nil
}

func (f field) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < f.min || n > f.max || strings.HasPrefix(s, "+") {
		if f.names != nil {
			return 0, fmt.Errorf("%q is not a number from %d to %d or a name such as %s", s, f.min, f.max, f.names[1])
		}
		return 0, fmt.Errorf("%q is not a number from %d to %d", s, f.min, f.max)
	}
	return n, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// matchDay reports whether c fires on the civil date y-m-d.
func (c *Expr) matchDay(y int, m time.Month, d int) bool {
	if !c.month[m] {
		return false
	}
	if c.year != nil && (y < yearMin || y > yearMax || !c.year[y-yearMin]) {
		return false
	}
	last := daysIn(y, m)
	wd := int(time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday())
	dom := c.dom[d] || c.lastDay && d == last || c.lastWeekday && d == lastWeekday(y, m)
	for _, n := range c.nearestWeekday {
		dom = dom || nearestWeekday(y, m, n) == d
	}
	dow := c.dow[wd] || c.lastOf[wd] && d+7 > last
	for _, nk := range c.nth {
		dow = dow || nk[0] == wd && (d-1)/7+1 == nk[1]
	}
	if !c.eventBridge && c.domRestricted && c.dowRestricted {
		return dom || dow
	}
	return dom && dow
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC).Day() }

// lastWeekday is the last Monday-Friday of the month.
func lastWeekday(y int, m time.Month) int {
	d := daysIn(y, m)
	switch time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		return d - 1
	case time.Sunday:
		return d - 2
	}
	return d
}

// nearestWeekday is the Monday-Friday nearest to day n without leaving the
// month; 0 when the month has no day n.
func nearestWeekday(y int, m time.Month, n int) int {
	last := daysIn(y, m)
	if n > last {
		return 0
	}
	switch time.Date(y, m, n, 12, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		if n == 1 {
			return 3
		}
		return n - 1
	case time.Sunday:
		if n == last {
			return n - 2
		}
		return n + 1
	}
	return n
}

// Fires returns the instants in (after, until] at which c fires in loc,
// ascending. The fields are wall time in loc, and daylight saving time is
// resolved so that every matching wall time fires exactly once:
//
//   - a wall time that occurs twice (clocks go back) fires at its first
//     occurrence;
//   - a wall time that does not exist (clocks go forward) fires at the end
//     of the gap, the first instant after it (03:00 for 02:30 on the day
//     New York springs forward; 02:30 for 02:15 when Lord Howe Island
//     moves by 30 minutes), so a daily start or stop is never lost. Several
//     wall times in one gap fire once.
//
// EventBridge Scheduler skips a non-existent time instead; for switching
// resources on and off, a missed day is the worse outcome.
func (c *Expr) Fires(loc *time.Location, after, until time.Time) []time.Time {
	if !until.After(after) {
		return nil
	}
	// Civil dates from the day before after to the day after until cover
	// every wall time that can resolve into the window.
	a, b := after.In(loc), until.In(loc)
	day := time.Date(a.Year(), a.Month(), a.Day()-1, 12, 0, 0, 0, time.UTC)
	end := time.Date(b.Year(), b.Month(), b.Day()+1, 12, 0, 0, 0, time.UTC)
	var out []time.Time
	for ; !day.After(end); day = day.AddDate(0, 0, 1) {
		y, m, d := day.Date()
		if !c.matchDay(y, m, d) {
			continue
		}
		for h, hOn := range c.hour {
			if !hOn {
				continue
			}
			for mi, mOn := range c.minute {
				if !mOn {
					continue
				}
				t := resolveWallTime(loc, y, m, d, h, mi)
				if t.After(after) && !t.After(until) {
					out = append(out, t)
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y time.Time) int { return x.Compare(y) })
	return slices.CompactFunc(out, func(x, y time.Time) bool { return x.Equal(y) })
}

// resolveWallTime is the instant of a wall time in loc: its first
// occurrence, or the end of the gap it falls in. time.Date leaves both
// cases unspecified.
func resolveWallTime(loc *time.Location, y int, m time.Month, d, h, mi int) time.Time {
	naive := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	var best, earliest time.Time
	// The offsets in force a day and a half around the wall time include
	// both sides of any transition near it.
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := naive.Add(probe).In(loc).Zone()
		cand := naive.Add(-time.Duration(off) * time.Second)
		if earliest.IsZero() || cand.Before(earliest) {
			earliest = cand
		}
		if _, got := cand.In(loc).Zone(); got == off && (best.IsZero() || cand.Before(best)) {
			best = cand
		}
	}
	if !best.IsZero() {
		return best
	}
	// In a gap: the earliest candidate lies before the transition, and its
	// zone period ends at the first instant after the gap.
	_, gapEnd := earliest.In(loc).ZoneBounds()
	return gapEnd.UTC()
}
