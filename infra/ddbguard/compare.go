package ddbguard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Compare reports the hazards and safe changes between the DynamoDB tables of
// two sets. Stacks pair by stage and stack; two single files pair with each
// other whatever their names. Check Compatible first: Compare does not
// refuse a file against a directory.
func Compare(old, new Set) Report {
	oldBy, newBy := byStack(old), byStack(new)
	if old.Layout == LayoutFile && new.Layout == LayoutFile && len(old.Templates) == 1 && len(new.Templates) == 1 {
		o, n := old.Templates[0], new.Templates[0]
		key := stackKey{n.Stage, n.Stack}
		if key.stage == "" {
			key.stage = o.Stage
		}
		oldBy = map[stackKey]*Template{key: o}
		newBy = map[stackKey]*Template{key: n}
	}
	keys := slices.SortedFunc(maps.Keys(mergeKeys(oldBy, newBy)), func(a, b stackKey) int {
		return cmp.Or(compareStages(a.stage, b.stage), strings.Compare(a.stack, b.stack))
	})

	c := &comparer{}
	c.report.Stacks = len(keys)
	var oldPool, newPool []*ref
	for _, key := range keys {
		o, n := oldBy[key], newBy[key]
		switch {
		case o == nil:
			c.change(Change{Stage: key.stage, Stack: key.stack, Detail: fmt.Sprintf("new stack with %d %s", len(n.tables), plural(len(n.tables), "table"))})
			for _, id := range slices.Sorted(maps.Keys(n.tables)) {
				newPool = append(newPool, &ref{stackKey: key, t: n.tables[id], stackChanged: true})
			}
		case n == nil:
			for _, id := range slices.Sorted(maps.Keys(o.tables)) {
				oldPool = append(oldPool, &ref{stackKey: key, t: o.tables[id], stackChanged: true})
			}
		default:
			c.compareBackups(key, o, n)
			c.compareAliases(key, o, n)
			for _, id := range slices.Sorted(maps.Keys(o.tables)) {
				if nt, ok := n.tables[id]; ok {
					c.compareTables(key, key, o.tables[id], nt)
					continue
				}
				oldPool = append(oldPool, &ref{stackKey: key, t: o.tables[id]})
			}
			for _, id := range slices.Sorted(maps.Keys(n.tables)) {
				if _, ok := o.tables[id]; !ok {
					newPool = append(newPool, &ref{stackKey: key, t: n.tables[id]})
				}
			}
		}
	}
	c.matchMoved(oldPool, newPool)
	for _, r := range oldPool {
		if !r.matched {
			c.removed(r)
		}
	}
	for _, r := range newPool {
		if !r.matched {
			c.report.Tables++
			if !r.stackChanged {
				c.change(Change{Stage: r.stage, Stack: r.stack, LogicalID: r.t.id, Detail: "new table " + r.t.displayName()})
			}
		}
	}
	sortReport(&c.report)
	return c.report
}

type stackKey struct{ stage, stack string }

func (k stackKey) String() string { return k.stage + "/" + k.stack }

func byStack(s Set) map[stackKey]*Template {
	out := map[stackKey]*Template{}
	for _, t := range s.Templates {
		out[stackKey{t.Stage, t.Stack}] = t
	}
	return out
}

func mergeKeys(a, b map[stackKey]*Template) map[stackKey]bool {
	out := map[stackKey]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// ref is a table that did not pair by logical id within its stack.
type ref struct {
	stackKey
	t *table
	// stackChanged: the table's stack is new (or gone) on the other side.
	stackChanged bool
	matched      bool
}

type comparer struct{ report Report }

func (c *comparer) change(ch Change) { c.report.Changes = append(c.report.Changes, ch) }

func (c *comparer) hazard(h Hazard) { c.report.Hazards = append(c.report.Hazards, h) }

// matchMoved pairs tables that kept their identity under another logical id
// (or in another stack of the same stage): first by TableName, then, for
// unnamed tables in the same stack, by key schema when that is unambiguous.
func (c *comparer) matchMoved(oldPool, newPool []*ref) {
	for _, o := range oldPool {
		if o.t.name == "" {
			continue
		}
		for _, n := range newPool {
			if !n.matched && n.stage == o.stage && n.t.name == o.t.name {
				o.matched, n.matched = true, true
				c.compareTables(o.stackKey, n.stackKey, o.t, n.t)
				break
			}
		}
	}
	unnamed := func(pool []*ref, r *ref) []*ref {
		var out []*ref
		for _, x := range pool {
			if !x.matched && x.t.name == "" && x.stackKey == r.stackKey && x.t.keys == r.t.keys {
				out = append(out, x)
			}
		}
		return out
	}
	for _, o := range oldPool {
		if o.matched || o.t.name != "" {
			continue
		}
		olds, news := unnamed(oldPool, o), unnamed(newPool, o)
		if len(olds) == 1 && len(news) == 1 {
			n := news[0]
			o.matched, n.matched = true, true
			c.compareTables(o.stackKey, n.stackKey, o.t, n.t)
		}
	}
}

func (c *comparer) removed(r *ref) {
	c.report.Tables++
	what := "table removed from the template"
	if r.stackChanged {
		what = "stack removed with the table"
	}
	h := Hazard{Class: TableRemoved, Stage: r.stage, Stack: r.stack, LogicalID: r.t.id, TableName: r.t.displayName()}
	switch {
	case retains(r.t.res.DeletionPolicy):
		h.Detail = what + ": DeletionPolicy " + r.t.res.DeletionPolicy + " leaves the table and its data orphaned outside any stack"
		h.Fix = "if the table is to go, acknowledge it, then delete the orphan by hand or `cdk import` it where it belongs; otherwise keep the resource"
	case anyProtection(r.t):
		h.Detail = what + ": CloudFormation deletes it, which fails on deletion protection and fails the deploy"
		h.Fix = "to keep the data set RemovalPolicy RETAIN and deploy before removing the table; to delete it turn deletion protection off in a deploy of its own first"
	default:
		h.Detail = what + ": CloudFormation deletes it with its data (DeletionPolicy " + policyText(r.t.res.DeletionPolicy) + ")"
		h.Fix = "to keep the data set RemovalPolicy RETAIN and deploy before removing the table; if the data is disposable, acknowledge it"
	}
	c.hazard(h)
}

// diff holds one matched pair of tables.
type diff struct {
	c        *comparer
	old, new stackKey
	o, n     *table
}

func (d *diff) hazard(class Class, detail, fix string) {
	h := Hazard{
		Class: class, Stage: d.new.stage, Stack: d.new.stack,
		LogicalID: d.n.id, TableName: d.n.displayName(), Detail: detail, Fix: fix,
	}
	if d.o.id != d.n.id {
		h.OldLogicalID = d.o.id
	}
	d.c.hazard(h)
}

func (d *diff) change(detail string) {
	d.c.change(Change{Stage: d.new.stage, Stack: d.new.stack, LogicalID: d.n.id, Detail: detail})
}

// protectedStage reports whether losing a table's data in stage is a hazard
// even when it is deliberate. Only dev is disposable; an unknown stage (a
// single file without metadata or --stage) counts as protected, because
// guessing wrong there loses production data.
func protectedStage(stage string) bool { return stage != "dev" }

func (c *comparer) compareTables(oldKey, newKey stackKey, o, n *table) {
	c.report.Tables++
	d := &diff{c: c, old: oldKey, new: newKey, o: o, n: n}
	if o.id != n.id || oldKey != newKey {
		// A new logical id is a new resource: the new table starts empty
		// whatever its properties, so nothing else about it matters.
		d.logicalIDChanged()
		if o.typ != n.typ {
			d.typeChanged()
		}
		return
	}
	if o.typ != n.typ {
		d.typeChanged()
		return
	}
	replaced := d.checkReplacement()
	replaced = d.checkLSIs() || replaced
	d.checkPolicies()
	if replaced {
		// The replacement creates the table afresh, so index, stream, TTL
		// and replica limits of an update do not apply.
		return
	}
	d.checkGSIs()
	d.checkStream()
	d.checkTTL()
	d.checkReplicas()
	d.checkUnits()
	d.checkWarmThroughput()
	d.checkOther()
}

// checkWarmThroughput: DynamoDB raises a table's or an index's warm
// throughput, never lowers it, so an update that lowers it fails; removing
// the setting leaves the table as warm as it is (safe).
func (d *diff) checkWarmThroughput() {
	type warm struct{ ReadUnitsPerSecond, WriteUnitsPerSecond float64 }
	read := func(v any) (warm, bool) {
		var w warm
		m, ok := v.(map[string]any)
		if !ok {
			return w, false
		}
		w.ReadUnitsPerSecond, _ = m["ReadUnitsPerSecond"].(float64)
		w.WriteUnitsPerSecond, _ = m["WriteUnitsPerSecond"].(float64)
		return w, true
	}
	check := func(what string, o, n any) {
		ow, okO := read(o)
		nw, okN := read(n)
		switch {
		case !okO && okN:
			d.change(what + " warm throughput set")
			return
		case okO && !okN:
			d.change(what + " warm throughput setting removed (the table stays as warm as it is)")
			return
		case !okO:
			return
		}
		var lowered []string
		for _, f := range []struct {
			name   string
			ov, nv float64
		}{{"reads", ow.ReadUnitsPerSecond, nw.ReadUnitsPerSecond}, {"writes", ow.WriteUnitsPerSecond, nw.WriteUnitsPerSecond}} {
			if f.nv > 0 && f.nv < f.ov {
				lowered = append(lowered, fmt.Sprintf("%s %g → %g per second", f.name, f.ov, f.nv))
			}
		}
		if len(lowered) > 0 {
			d.hazard(WarmThroughputLowered,
				what+" warm throughput lowered ("+strings.Join(lowered, ", ")+"): DynamoDB can raise warm throughput, never lower it, so the update fails",
				"keep the current value in the template (or drop WarmThroughput: the table stays as warm as it is); warm throughput is billed once per raise, not per hour")
		} else if render(o) != render(n) {
			d.change(what + " warm throughput raised")
		}
	}
	check("table", d.o.res.Properties["WarmThroughput"], d.n.res.Properties["WarmThroughput"])
	indexWarm := func(t *table) map[string]any {
		out := map[string]any{}
		var specs []map[string]any
		_ = decode(t.res.Properties, "GlobalSecondaryIndexes", &specs)
		for _, s := range specs {
			if name, _ := s["IndexName"].(string); name != "" {
				out[name] = s["WarmThroughput"]
			}
		}
		return out
	}
	ow, nw := indexWarm(d.o), indexWarm(d.n)
	for _, name := range slices.Sorted(maps.Keys(nw)) {
		if o, ok := ow[name]; ok {
			check("index "+name, o, nw[name])
		}
	}
}

func (d *diff) logicalIDChanged() {
	how := "same TableName " + d.n.name
	if d.n.name == "" {
		how = "same key schema, unnamed"
	}
	detail := fmt.Sprintf("logical id %s → %s (%s)", d.o.id, d.n.id, how)
	fix := fmt.Sprintf("keep the logical id (overrideLogicalId(%q) on the table's Cfn resource), or set RemovalPolicy RETAIN, remove the table, then `cdk import` it as %s", d.o.id, d.n.id)
	if d.old != d.new {
		detail = fmt.Sprintf("table moved from stack %s to %s (%s → %s, %s)", d.old, d.new, d.o.id, d.n.id, how)
		fix = fmt.Sprintf("keep the table in %s, or set RemovalPolicy RETAIN, remove it from %s, then `cdk import` it into %s", d.old, d.old, d.new)
	}
	fate := "deletes the old table with its data"
	if retains(d.o.res.DeletionPolicy) {
		fate = "orphans the old table (DeletionPolicy " + d.o.res.DeletionPolicy + ")"
	}
	if d.n.name != "" {
		detail += ": CloudFormation creates the new table before removing the old one, and the create fails because the name is taken; with another name it would start empty and CloudFormation " + fate
	} else {
		detail += ": CloudFormation creates a new, empty table and " + fate
	}
	d.hazard(LogicalIDChange, detail, fix)
}

func (d *diff) typeChanged() {
	d.hazard(TableTypeChange,
		d.o.typ+" → "+d.n.typ+": CloudFormation cannot change a resource's type in place",
		"migrate with retain + import: set RemovalPolicy RETAIN and deploy, remove the table from the stack and deploy (the table stays, orphaned), then `cdk import` it as "+d.n.typ)
}

// checkReplacement reports changes that make CloudFormation replace the
// table: key schema, key attribute types, TableName.
func (d *diff) checkReplacement() bool {
	var parts []string
	switch {
	case d.o.keyNames != d.n.keyNames:
		parts = append(parts, "key schema "+d.o.keys+" → "+d.n.keys)
	case d.o.keys != d.n.keys:
		parts = append(parts, "key attribute types "+d.o.keys+" → "+d.n.keys)
	}
	renamed := d.o.name != d.n.name
	if renamed {
		parts = append(parts, "TableName "+d.o.displayName()+" → "+d.n.displayName())
	}
	if len(parts) == 0 {
		return false
	}
	var why string
	switch {
	case !renamed && d.n.name != "":
		why = "CloudFormation must replace the table and refuses to for a custom-named table: the update fails"
	case retains(d.o.res.UpdateReplacePolicy):
		why = "CloudFormation replaces the table: the new one starts empty and the old one is orphaned (UpdateReplacePolicy " + d.o.res.UpdateReplacePolicy + ")"
	default:
		why = "CloudFormation replaces the table: the new one starts empty and the old one is deleted with its data"
	}
	d.hazard(TableReplacement, strings.Join(parts, ", ")+": "+why,
		"create a new table (new construct id and name) beside the old one, copy the data (export to S3 and import, or dual writes plus a backfill), move readers and writers, then remove the old table in a later deploy")
	return true
}

func (d *diff) checkLSIs() bool {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(unionKeys(d.o.lsis, d.n.lsis))) {
		o, inOld := d.o.lsis[name]
		n, inNew := d.n.lsis[name]
		switch {
		case !inOld:
			parts = append(parts, "LSI "+name+" added")
		case !inNew:
			parts = append(parts, "LSI "+name+" removed")
		case o.sig() != n.sig():
			parts = append(parts, "LSI "+name+" changed ("+o.sig()+" → "+n.sig()+")")
		}
	}
	if len(parts) == 0 {
		return false
	}
	why := "an LSI exists only from table creation, so CloudFormation must replace the table"
	if d.n.name != "" {
		why += ", which it refuses for a custom-named table"
	} else {
		why += ", and the new one starts empty"
	}
	d.hazard(LSIChange, strings.Join(parts, ", ")+": "+why,
		"use a GSI instead (one per deploy), or create a new table with the LSI and migrate the data")
	return true
}

func unionKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

type step struct{ verb, name string }

// renderSteps renders deploy steps as "add index A, then index B, then
// delete index C".
func renderSteps(steps []step, noun string) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		if i > 0 && steps[i-1].verb == s.verb {
			parts[i] = noun + " " + s.name
		} else {
			parts[i] = s.verb + " " + noun + " " + s.name
		}
	}
	return strings.Join(parts, ", then ")
}

// listSteps lists operations for a detail: "add index A, delete index B".
func listSteps(steps []step, noun string) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.verb + " " + noun + " " + s.name
	}
	return strings.Join(parts, ", ")
}

func (d *diff) checkGSIs() {
	var added, removed, changed []string
	for _, name := range slices.Sorted(maps.Keys(unionKeys(d.o.gsis, d.n.gsis))) {
		o, inOld := d.o.gsis[name]
		n, inNew := d.n.gsis[name]
		switch {
		case !inOld:
			added = append(added, name)
		case !inNew:
			removed = append(removed, name)
		case o.sig() != n.sig():
			changed = append(changed, name)
		case o.settings != n.settings:
			d.change("index " + name + " settings changed")
		}
	}
	// A deleted index and an added one with the same definition is a rename.
	type rename struct{ from, to string }
	var renames []rename
	taken := map[string]bool{}
	for _, r := range removed {
		for _, a := range added {
			if !taken[a] && d.o.gsis[r].sig() == d.n.gsis[a].sig() {
				renames = append(renames, rename{r, a})
				taken[r], taken[a] = true, true
				break
			}
		}
	}
	removed = slices.DeleteFunc(removed, func(s string) bool { return taken[s] })
	added = slices.DeleteFunc(added, func(s string) bool { return taken[s] })

	const outage = "CloudFormation deletes and re-creates the index (it cannot change one in place), and queries on it fail until the new one has backfilled"
	for _, r := range renames {
		d.hazard(GSIReplaced,
			"index "+r.from+" renamed to "+r.to+": "+outage,
			"add index "+r.to+" in one deploy, move readers once it is ACTIVE, then delete index "+r.from+" in a later deploy")
	}
	for _, name := range changed {
		o, n := d.o.gsis[name], d.n.gsis[name]
		var what []string
		if o.keys != n.keys {
			what = append(what, "key schema "+o.keys+" → "+n.keys)
		}
		if o.projection != n.projection {
			what = append(what, "projection "+o.projection+" → "+n.projection)
		}
		d.hazard(GSIReplaced,
			"index "+name+" "+strings.Join(what, ", ")+": "+outage,
			"add the new definition under a new index name in one deploy, move readers once it is ACTIVE, then delete index "+name+" in a later deploy")
	}

	// Adds first and deletes last, so readers always have an index.
	var steps []step
	for _, a := range added {
		steps = append(steps, step{"add", a})
	}
	for _, r := range renames {
		steps = append(steps, step{"add", r.to})
	}
	for _, name := range changed {
		steps = append(steps, step{"delete", name}, step{"add", name})
	}
	for _, r := range removed {
		steps = append(steps, step{"delete", r})
	}
	for _, r := range renames {
		steps = append(steps, step{"delete", r.from})
	}
	switch {
	case len(steps) > 1:
		d.hazard(MultipleGSIChanges,
			fmt.Sprintf("%d index operations in one update (%s): CloudFormation creates or deletes one global secondary index per update and fails otherwise", len(steps), listSteps(steps, "index")),
			fmt.Sprintf("split into %s deploys: %s", count(len(steps)), renderSteps(steps, "index")))
	case len(added) == 1:
		d.change("index " + added[0] + " added")
	case len(removed) == 1:
		d.change("index " + removed[0] + " deleted")
	}
}

func (d *diff) checkStream() {
	o, n := d.o.stream, d.n.stream
	switch {
	case o == n:
	case o == "":
		d.change("stream enabled (" + n + ")")
	case n == "":
		d.hazard(StreamChange,
			"stream ("+o+") disabled: its consumers stop receiving changes and the stream ARN goes away",
			"remove the stream's consumers (event source mappings, pipes) in one deploy, then disable the stream in a later one")
	default:
		d.hazard(StreamChange,
			"stream view type "+o+" → "+n+": DynamoDB cannot change the view type of an enabled stream",
			"two deploys: remove StreamSpecification (disables the stream), then add it with "+n+"; consumers must move to the new stream ARN, and writes between the deploys are not streamed")
	}
}

func (d *diff) checkTTL() {
	o, n := d.o, d.n
	switch {
	case !o.ttlOn && n.ttlOn:
		d.change("TTL enabled on " + n.ttlAttr)
	case o.ttlOn && !n.ttlOn:
		d.hazard(TTLChange,
			"TTL on "+o.ttlAttr+" disabled: items stop expiring and the table grows",
			"keep TTL on unless every item should now be kept; if so, acknowledge it (re-enabling later is another TTL change, at most one per hour)")
	case o.ttlOn && n.ttlOn && o.ttlAttr != n.ttlAttr:
		d.hazard(TTLChange,
			"TTL attribute "+o.ttlAttr+" → "+n.ttlAttr+": DynamoDB cannot move TTL to another attribute in one update",
			"two deploys about an hour apart (DynamoDB allows one TTL change per hour): disable TTL on "+o.ttlAttr+", then enable it on "+n.ttlAttr+"; write "+n.ttlAttr+" on existing items first")
	}
}

func (d *diff) checkReplicas() {
	if d.n.typ != typeGlobalTable {
		return
	}
	var steps []step
	for _, r := range d.n.replicas {
		if _, ok := d.o.units[r]; !ok {
			steps = append(steps, step{"add", r})
		}
	}
	for _, r := range d.o.replicas {
		if _, ok := d.n.units[r]; !ok {
			steps = append(steps, step{"remove", r})
		}
	}
	for _, st := range steps {
		if st.verb == "add" && d.n.units[st.name]["ResourcePolicy"] != nil {
			d.hazard(PolicyOnNewReplica,
				"replica "+st.name+" added with a resource-based policy in the same update: CloudFormation does not support a replica and its resource policy in one update",
				"two deploys: add replica "+st.name+" without ResourcePolicy, then add its policy")
		}
	}
	switch {
	case len(steps) > 1:
		d.hazard(MultipleReplicaChanges,
			fmt.Sprintf("%d replica changes in one update (%s): CloudFormation adds or removes one replica per update", len(steps), listSteps(steps, "replica")),
			fmt.Sprintf("split into %s deploys: %s", count(len(steps)), renderSteps(steps, "replica")))
	case len(steps) == 1 && steps[0].verb == "add":
		d.change("replica " + steps[0].name + " added")
	case len(steps) == 1:
		d.change("replica " + steps[0].name + " removed")
	}
}

// checkPolicies covers the resource-level policies; they decide whether the
// data survives a removal or a replacement, so they are checked even when
// the table is replaced.
func (d *diff) checkPolicies() {
	var dropped []string
	for _, p := range []struct{ name, o, n string }{
		{"DeletionPolicy", d.o.res.DeletionPolicy, d.n.res.DeletionPolicy},
		{"UpdateReplacePolicy", d.o.res.UpdateReplacePolicy, d.n.res.UpdateReplacePolicy},
	} {
		if p.o == p.n {
			continue
		}
		what := p.name + " " + policyText(p.o) + " → " + policyText(p.n)
		if retains(p.o) && !retains(p.n) && protectedStage(d.new.stage) {
			dropped = append(dropped, what)
			continue
		}
		d.change(what)
	}
	// Deletion protection is a unit setting, but it answers the same
	// question as the policies, so it is reported with them.
	for _, region := range d.commonUnits() {
		o, n := protectionOn(d.o.units[region]), protectionOn(d.n.units[region])
		if o == n {
			continue
		}
		what := d.unitLabel(region) + "deletion protection turned " + onOff(n)
		if o && protectedStage(d.new.stage) {
			dropped = append(dropped, what)
			continue
		}
		d.change(what)
	}
	if len(dropped) > 0 {
		d.hazard(ProtectionDropped,
			strings.Join(dropped, ", ")+": in "+orDash(d.new.stage)+" a later removal or replacement would delete the table's data",
			"keep RemovalPolicy RETAIN and deletion protection in "+orDash(d.new.stage)+" (the stage policy); if the table is to go, drop them in a deploy of their own and acknowledge it")
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// commonUnits lists the units (the table, or replicas by region) present on
// both sides.
func (d *diff) commonUnits() []string {
	var out []string
	for _, u := range slices.Sorted(maps.Keys(d.n.units)) {
		if _, ok := d.o.units[u]; ok {
			out = append(out, u)
		}
	}
	return out
}

// unitLabel prefixes replica settings with the region only when the table
// has more than one replica; the common single-replica case reads as the
// table's own setting.
func (d *diff) unitLabel(region string) string {
	if region == "" || (len(d.o.units) == 1 && len(d.n.units) == 1) {
		return ""
	}
	return "replica " + region + ": "
}

func (d *diff) checkUnits() {
	for _, region := range d.commonUnits() {
		label := d.unitLabel(region)
		oOn, oSpec := pitr(d.o.units[region])
		nOn, nSpec := pitr(d.n.units[region])
		switch {
		case oOn && !nOn && protectedStage(d.new.stage):
			d.hazard(PITRDisabled,
				label+"point-in-time recovery turned off in "+orDash(d.new.stage)+": the restore window is lost",
				"keep point-in-time recovery on in "+orDash(d.new.stage)+" (the stage policy); if it must go, take an on-demand backup first and acknowledge it")
		case oOn && !nOn:
			d.change(label + "PITR disabled")
		case !oOn && nOn:
			d.change(label + "PITR enabled")
		case oSpec != nSpec:
			d.change(label + "PITR settings changed")
		}
	}
}

// handled are the properties judged by the checks above; checkOther lists
// changes to any other property as safe, so nothing changes unseen.
var handled = map[string]bool{
	"TableName": true, "KeySchema": true, "AttributeDefinitions": true,
	"GlobalSecondaryIndexes": true, "LocalSecondaryIndexes": true,
	"StreamSpecification": true, "TimeToLiveSpecification": true, "Replicas": true,
	"DeletionProtectionEnabled": true, "PointInTimeRecoverySpecification": true,
	"WarmThroughput": true,
}

func (d *diff) checkOther() {
	op, np := d.o.res.Properties, d.n.res.Properties
	for _, k := range slices.Sorted(maps.Keys(unionKeys(op, np))) {
		if !handled[k] && render(op[k]) != render(np[k]) {
			d.change(describeProperty(k, op[k], np[k]))
		}
	}
	if d.n.typ != typeGlobalTable {
		return
	}
	for _, region := range d.commonUnits() {
		o, n := d.o.units[region], d.n.units[region]
		label := d.unitLabel(region)
		for _, k := range slices.Sorted(maps.Keys(unionKeys(o, n))) {
			switch k {
			case "Region", "PointInTimeRecoverySpecification", "DeletionProtectionEnabled":
			case "GlobalSecondaryIndexes":
				d.replicaIndexes(label, o[k], n[k])
			default:
				if render(o[k]) != render(n[k]) {
					d.change(label + describeProperty(k, o[k], n[k]))
				}
			}
		}
	}
}

// replicaIndexes reports per-replica index settings (read capacity,
// contributor insights) of indexes present on both sides; added and removed
// indexes are judged by checkGSIs.
func (d *diff) replicaIndexes(label string, o, n any) {
	settings := func(v any) map[string]string {
		out := map[string]string{}
		list, _ := v.([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			name, _ := m["IndexName"].(string)
			out[name] = render(m)
		}
		return out
	}
	before, after := settings(o), settings(n)
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if prev, ok := before[name]; ok && prev != after[name] {
			d.change(label + "index " + name + " replica settings changed")
		}
	}
}

func describeProperty(key string, o, n any) string {
	switch key {
	case "Tags":
		return "tags changed"
	case "BillingMode":
		return "billing mode " + render(o) + " → " + render(n)
	}
	return key + " changed"
}

// sortReport orders hazards and changes by stack and table, keeping the
// order of the checks within a table, so that output and tests are stable
// and a table's changes sit together in the summary.
func sortReport(r *Report) {
	slices.SortStableFunc(r.Hazards, func(a, b Hazard) int {
		return cmp.Or(compareStages(a.Stage, b.Stage), strings.Compare(a.Stack, b.Stack), strings.Compare(a.LogicalID, b.LogicalID))
	})
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(compareStages(a.Stage, b.Stage), strings.Compare(a.Stack, b.Stack), strings.Compare(a.LogicalID, b.LogicalID))
	})
}

// compareStages orders stages the way changes reach them (dev, stage,
// prod), then any other stage by name.
func compareStages(a, b string) int {
	rank := func(s string) int {
		if i := slices.Index([]string{"dev", "stage", "prod"}, s); i >= 0 {
			return i
		}
		return 3
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}
