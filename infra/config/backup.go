package config

import (
	"fmt"
	"regexp"

	"github.com/dynastack/dynastack/constructs/table"
)

// BackupPlan is a stage's AWS Backup plan, kept beside point-in-time
// recovery: PITR restores any second of the last 35 days in the table's own
// Region and account; a backup is a copy AWS Backup keeps apart from the
// table (in a vault whose recovery points outlive the table), and its copy
// action puts one in a second Region. Every service stack of a stage that
// has a plan gets its own vault, plan and selection of that stack's tables
// (infra/stacks/backup.go), so nothing crosses a stack and a service keeps
// working when it moves to another account. docs/stage-policy.md lists the
// defaults and docs/restoring.md the restore.
//
// The zero value is no plan (dev).
type BackupPlan struct {
	// RetentionDays is how long each daily backup is kept in the stage's
	// vault; 0 is no plan at all (and every other field must be unset).
	//
	// Default: 0 in dev, StageBackupRetentionDays in stage,
	// ProdBackupRetentionDays in prod.
	RetentionDays int
	// Schedule is when the backup runs: an AWS Backup cron expression,
	// read in UTC.
	//
	// Default: DefaultBackupSchedule (daily, 05:00 UTC).
	Schedule string
	// CopyRegion is the second Region each backup is copied to; "" copies
	// nothing. It must differ from the stage's Region. The destination is
	// the vault CopyVaultName in that Region of the stack's own account,
	// which must exist before the first backup runs (docs/restoring.md,
	// "The copy vault"): AWS Backup copies into a vault, it does not make
	// one.
	//
	// Default: "" in dev and stage, DefaultCopyRegion in prod.
	CopyRegion string
	// CopyVaultName is the destination vault's name in CopyRegion.
	//
	// Default: dynastack-<stage>-copy (CopyVaultFor).
	CopyVaultName string
	// CopyRetentionDays is how long the copy is kept.
	//
	// Default: RetentionDays.
	CopyRetentionDays int
}

// The backup defaults of docs/stage-policy.md.
const (
	// DefaultBackupSchedule runs once a day, at 05:00 UTC.
	DefaultBackupSchedule = "cron(0 5 * * ? *)"
	// ProdBackupRetentionDays keeps prod's backups as long as its PITR
	// window (35 days), and StageBackupRetentionDays stage's a week.
	ProdBackupRetentionDays  = 35
	StageBackupRetentionDays = 7
	// DefaultCopyRegion receives prod's copies (the stages are
	// environment-agnostic; a stage deployed in us-west-2 must choose
	// another).
	DefaultCopyRegion = "us-west-2"
	// MaxBackupRetentionDays is AWS Backup's longest retention (100 years).
	MaxBackupRetentionDays = 36500
)

// backupVaultName is AWS Backup's rule for vault names.
var backupVaultName = regexp.MustCompile(`^[a-zA-Z0-9_-]{2,50}$`)

// Enabled reports whether the stage has a plan.
func (b BackupPlan) Enabled() bool { return b.RetentionDays != 0 }

// Copies reports whether the plan copies each backup to a second Region.
func (b BackupPlan) Copies() bool { return b.CopyRegion != "" }

// BackupFor returns the stage's backup plan with its defaults filled in:
// the zero plan stays the zero plan.
func (s Stage) BackupFor() BackupPlan {
	b := s.Backup
	if !b.Enabled() {
		return b
	}
	if b.Schedule == "" {
		b.Schedule = DefaultBackupSchedule
	}
	if b.Copies() {
		if b.CopyVaultName == "" {
			b.CopyVaultName = CopyVaultFor(s.Name)
		}
		if b.CopyRetentionDays == 0 {
			b.CopyRetentionDays = b.RetentionDays
		}
	}
	return b
}

// CopyVaultFor is the default name of a stage's copy vault in its
// CopyRegion: one per stage and account, shared by the stage's services.
func CopyVaultFor(stage table.Stage) string { return "dynastack-" + string(stage) + "-copy" }

// validateBackup names each bad backup setting and its fix. prod must have
// a plan that keeps its backups at least as long as its PITR window and
// copies them out of the Region: a backup in the table's Region and
// account is lost with them.
func (s Stage) validateBackup() []error {
	b := s.Backup
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("stage %s: Backup.%s", s.Name, fmt.Sprintf(format, args...)))
	}
	if !b.Enabled() {
		if b != (BackupPlan{}) {
			bad("RetentionDays is 0 (no plan) but other backup fields are set: set RetentionDays (1 to %d) or clear them", MaxBackupRetentionDays)
		}
		if s.Name == table.Prod {
			bad("RetentionDays is 0: prod keeps daily backups for at least %d days, copied to a second Region (docs/stage-policy.md)", ProdBackupRetentionDays)
		}
		return errs
	}
	if b.RetentionDays < 1 || b.RetentionDays > MaxBackupRetentionDays {
		bad("RetentionDays=%d: use 1 to %d, or 0 for no plan", b.RetentionDays, MaxBackupRetentionDays)
	}
	if b.Schedule != "" && !cronExpr.MatchString(b.Schedule) {
		bad("Schedule %q: use an AWS Backup cron expression in UTC, cron(<6 fields>), e.g. %s", b.Schedule, DefaultBackupSchedule)
	}
	if !b.Copies() {
		if b.CopyVaultName != "" || b.CopyRetentionDays != 0 {
			bad("CopyVaultName or CopyRetentionDays is set without CopyRegion: set the Region to copy to, or clear them")
		}
	} else {
		switch {
		case !RegionInPartition(b.CopyRegion, s.PartitionOf()):
			bad("CopyRegion %q: use a Region of the stage's partition %s, such as %s", b.CopyRegion, s.PartitionOf(), DefaultCopyRegion)
		case b.CopyRegion == s.Region:
			bad("CopyRegion %q is the stage's own Region: a copy must leave the Region to survive it", b.CopyRegion)
		}
		if b.CopyVaultName != "" && !backupVaultName.MatchString(b.CopyVaultName) {
			bad("CopyVaultName %q: use 2 to 50 of a-z, A-Z, 0-9, '-', '_'", b.CopyVaultName)
		}
		if b.CopyRetentionDays < 0 || b.CopyRetentionDays > MaxBackupRetentionDays {
			bad("CopyRetentionDays=%d: use 1 to %d, or 0 for RetentionDays", b.CopyRetentionDays, MaxBackupRetentionDays)
		}
	}
	if s.Name == table.Prod {
		if b.RetentionDays < ProdBackupRetentionDays {
			bad("RetentionDays=%d: prod keeps its backups at least %d days (its PITR window)", b.RetentionDays, ProdBackupRetentionDays)
		}
		if !b.Copies() {
			bad("CopyRegion is unset: prod copies its backups to a second Region (e.g. %s)", DefaultCopyRegion)
		}
	}
	return errs
}
