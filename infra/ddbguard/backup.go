package ddbguard

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The AWS Backup resources the stage policy gives a stack with tables
// (infra/config.BackupPlan): the copies beyond PITR. Adding them is safe;
// in a protected stage, removing one or weakening a plan (a shorter
// retention, a copy dropped, a table left out of the selection) loses the
// backups a restore may need, and is a hazard.
const (
	backupVault     = "AWS::Backup::BackupVault"
	backupPlan      = "AWS::Backup::BackupPlan"
	backupSelection = "AWS::Backup::BackupSelection"
)

func isBackup(typ string) bool {
	return typ == backupVault || typ == backupPlan || typ == backupSelection
}

// compareBackups judges the backup resources of a stack present on both
// sides. A new or removed stack's backups go with it, as its tables do.
func (c *comparer) compareBackups(key stackKey, o, n *Template) {
	protected := protectedStage(key.stage)
	ids := unionKeys(backups(o), backups(n))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		or, inOld := o.Resources[id]
		nr, inNew := n.Resources[id]
		switch {
		case !inOld || !isBackup(or.Type):
			c.change(Change{Stage: key.stage, Stack: key.stack, LogicalID: id, Detail: "new " + describeBackup(nr)})
		case !inNew || !isBackup(nr.Type) || or.Type != nr.Type:
			if !protected {
				c.change(Change{Stage: key.stage, Stack: key.stack, LogicalID: id, Detail: "removed " + describeBackup(or)})
				continue
			}
			c.hazard(Hazard{
				Class: BackupRemoved, Stage: key.stage, Stack: key.stack, LogicalID: id, TableName: backupName(or),
				Detail: "removed " + describeBackup(or) + ": the stack's tables are no longer backed up beyond PITR as the stage policy says",
				Fix:    "keep the stage's backup plan (infra/config, Backup); if it must go, acknowledge it: the vault is retained and its recovery points expire on their own lifecycle",
			})
		default:
			weaker := weakened(or, nr)
			switch {
			case len(weaker) > 0 && protected:
				c.hazard(Hazard{
					Class: BackupWeakened, Stage: key.stage, Stack: key.stack, LogicalID: id, TableName: backupName(nr),
					Detail: describeBackup(nr) + ": " + strings.Join(weaker, ", "),
					Fix:    "keep the retention, the copy and every table in the selection (the stage policy, infra/config Backup); if the change is meant, acknowledge it",
				})
			case len(weaker) > 0:
				c.change(Change{Stage: key.stage, Stack: key.stack, LogicalID: id, Detail: describeBackup(nr) + ": " + strings.Join(weaker, ", ")})
			case render(or.Properties) != render(nr.Properties):
				c.change(Change{Stage: key.stage, Stack: key.stack, LogicalID: id, Detail: "changed " + describeBackup(nr)})
			}
		}
	}
}

// backups is the set of a template's backup resources by logical id.
func backups(t *Template) map[string]bool {
	out := map[string]bool{}
	for id, r := range t.Resources {
		if isBackup(r.Type) {
			out[id] = true
		}
	}
	return out
}

// backupName is a vault's or plan's name, or a selection's, for output.
func backupName(r Resource) string {
	switch r.Type {
	case backupVault:
		return render(r.Properties["BackupVaultName"])
	case backupPlan:
		plan, _ := r.Properties["BackupPlan"].(map[string]any)
		return render(plan["BackupPlanName"])
	default:
		sel, _ := r.Properties["BackupSelection"].(map[string]any)
		return render(sel["SelectionName"])
	}
}

// describeBackup says what a backup resource keeps, for the reviewer.
func describeBackup(r Resource) string {
	name := backupName(r)
	switch r.Type {
	case backupVault:
		return "backup vault " + name
	case backupPlan:
		var rules []string
		for _, rl := range planRules(r) {
			s := fmt.Sprintf("%s, %s days", render(rl["ScheduleExpression"]), days(rl["Lifecycle"]))
			for _, cp := range listOf(rl["CopyActions"]) {
				s += fmt.Sprintf(", copied for %s days to %s", days(cp["Lifecycle"]), render(cp["DestinationBackupVaultArn"]))
			}
			rules = append(rules, s)
		}
		return fmt.Sprintf("backup plan %s (%s)", name, strings.Join(rules, "; "))
	default:
		return fmt.Sprintf("backup selection %s of %d %s", name, len(selected(r)), plural(len(selected(r)), "resource"))
	}
}

// weakened lists what n keeps less of than o: a plan rule's retention or
// copy, a selection's resources.
func weakened(o, n Resource) []string {
	var out []string
	switch n.Type {
	case backupPlan:
		newRules := map[string]map[string]any{}
		for _, rl := range planRules(n) {
			newRules[render(rl["RuleName"])] = rl
		}
		for _, orl := range planRules(o) {
			name := render(orl["RuleName"])
			nrl, ok := newRules[name]
			if !ok {
				out = append(out, "rule "+name+" removed")
				continue
			}
			if lower(orl["Lifecycle"], nrl["Lifecycle"]) {
				out = append(out, fmt.Sprintf("rule %s keeps backups %s days instead of %s", name, days(nrl["Lifecycle"]), days(orl["Lifecycle"])))
			}
			newCopies := map[string]map[string]any{}
			for _, cp := range listOf(nrl["CopyActions"]) {
				newCopies[render(cp["DestinationBackupVaultArn"])] = cp
			}
			for _, ocp := range listOf(orl["CopyActions"]) {
				dest := render(ocp["DestinationBackupVaultArn"])
				ncp, ok := newCopies[dest]
				switch {
				case !ok:
					out = append(out, fmt.Sprintf("rule %s no longer copies to %s", name, dest))
				case lower(ocp["Lifecycle"], ncp["Lifecycle"]):
					out = append(out, fmt.Sprintf("rule %s keeps copies %s days instead of %s", name, days(ncp["Lifecycle"]), days(ocp["Lifecycle"])))
				}
			}
		}
	case backupSelection:
		kept := selected(n)
		for _, r := range selected(o) {
			if !slices.Contains(kept, r) {
				out = append(out, "no longer selects "+r)
			}
		}
	}
	return out
}

func planRules(r Resource) []map[string]any {
	plan, _ := r.Properties["BackupPlan"].(map[string]any)
	return listOf(plan["BackupPlanRule"])
}

// selected is a selection's resources, each rendered.
func selected(r Resource) []string {
	sel, _ := r.Properties["BackupSelection"].(map[string]any)
	var out []string
	for _, v := range asList(sel["Resources"]) {
		out = append(out, render(v))
	}
	return out
}

// days renders a lifecycle's DeleteAfterDays ("forever" when unset: AWS
// Backup then keeps recovery points until deleted).
func days(lifecycle any) string {
	d, ok := deleteAfter(lifecycle)
	if !ok {
		return "unlimited"
	}
	return fmt.Sprint(d)
}

func deleteAfter(lifecycle any) (float64, bool) {
	l, _ := lifecycle.(map[string]any)
	d, ok := l["DeleteAfterDays"].(float64)
	return d, ok
}

// lower reports a retention that went down (unset is unlimited).
func lower(o, n any) bool {
	od, oSet := deleteAfter(o)
	nd, nSet := deleteAfter(n)
	return nSet && (!oSet || nd < od)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func listOf(v any) []map[string]any {
	var out []map[string]any
	for _, x := range asList(v) {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
