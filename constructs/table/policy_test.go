package table_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/table"
)

func ptr[T any](v T) *T { return &v }

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		stage       table.Stage
		pitr        bool
		removal     awscdk.RemovalPolicy
		protected   bool
		read, write int
	}{
		{table.Dev, false, awscdk.RemovalPolicy_DESTROY, false, 1000, 1000},
		{table.Stg, true, awscdk.RemovalPolicy_RETAIN, false, 2000, 2000},
		{table.Prod, true, awscdk.RemovalPolicy_RETAIN, true, 10000, 5000},
	}
	for _, tt := range tests {
		t.Run(string(tt.stage), func(t *testing.T) {
			p, err := table.DefaultPolicy(tt.stage)
			if err != nil {
				t.Fatal(err)
			}
			if p.PointInTimeRecovery != tt.pitr || p.RemovalPolicy != tt.removal || p.DeletionProtection != tt.protected {
				t.Errorf("DefaultPolicy(%s) = pitr %v, removal %v, protection %v; want %v, %v, %v",
					tt.stage, p.PointInTimeRecovery, p.RemovalPolicy, p.DeletionProtection, tt.pitr, tt.removal, tt.protected)
			}
			if b := p.Billing; b.Mode != table.OnDemand || b.MaxReadRequestUnits != tt.read || b.MaxWriteRequestUnits != tt.write {
				t.Errorf("DefaultPolicy(%s) billing %+v, want on-demand capped at %d reads and %d writes per second", tt.stage, b, tt.read, tt.write)
			}
			if p.Encryption != table.AWSOwned || p.Stream != table.NoStream {
				t.Errorf("DefaultPolicy(%s) encryption %v stream %q, want AWS_OWNED and no stream", tt.stage, p.Encryption, p.Stream)
			}
		})
	}
	if _, err := table.DefaultPolicy("qa"); err == nil || !strings.Contains(err.Error(), `stage "qa" is not one of dev, stage, prod`) {
		t.Errorf("DefaultPolicy(qa) = %v, want an error naming the stage", err)
	}
}

func TestResolve(t *testing.T) {
	streamSpec := validSpec()
	streamSpec.Stream = table.OldImage
	pitrSpec := validSpec()
	pitrSpec.RequirePointInTimeRecovery = true
	kmsSpec := validSpec()
	kmsSpec.Encryption = table.AWSManaged

	tests := []struct {
		name  string
		spec  table.Spec
		stage table.Stage
		o     table.Overrides
		want  string // error substring; "" for success
		check func(t *testing.T, p table.Policy)
	}{
		{name: "dev default", spec: validSpec(), stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			if p.PointInTimeRecovery || p.RecoveryPeriodDays != 0 {
				t.Errorf("dev recovery on: %+v", p)
			}
		}},
		{name: "override recovery on in dev", spec: validSpec(), stage: table.Dev, o: table.Overrides{PointInTimeRecovery: ptr(true)}, check: func(t *testing.T, p table.Policy) {
			if !p.PointInTimeRecovery || p.RecoveryPeriodDays != table.MaxRecoveryPeriodDays {
				t.Errorf("override ignored: %+v", p)
			}
		}},
		{name: "override recovery off in stage", spec: validSpec(), stage: table.Stg, o: table.Overrides{PointInTimeRecovery: ptr(false)}, check: func(t *testing.T, p table.Policy) {
			if p.PointInTimeRecovery || p.RecoveryPeriodDays != 0 {
				t.Errorf("override ignored: %+v", p)
			}
		}},
		{name: "spec requires recovery in dev", spec: pitrSpec, stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			if !p.PointInTimeRecovery {
				t.Errorf("required recovery not applied: %+v", p)
			}
		}},
		{name: "spec stream applied", spec: streamSpec, stage: table.Prod, check: func(t *testing.T, p table.Policy) {
			if p.Stream != table.OldImage {
				t.Errorf("stream = %q, want OLD_IMAGE", p.Stream)
			}
		}},
		{name: "stream override where none required", spec: validSpec(), stage: table.Dev, o: table.Overrides{Stream: ptr(table.KeysOnly)}, check: func(t *testing.T, p table.Policy) {
			if p.Stream != table.KeysOnly {
				t.Errorf("stream = %q", p.Stream)
			}
		}},
		{name: "tags merged", spec: validSpec(), stage: table.Dev, o: table.Overrides{Tags: map[string]string{"team": "payments"}}, check: func(t *testing.T, p table.Policy) {
			if p.Tags["team"] != "payments" {
				t.Errorf("tags = %v", p.Tags)
			}
		}},
		{name: "dev retain", spec: validSpec(), stage: table.Dev, o: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_RETAIN)}, check: func(t *testing.T, p table.Policy) {
			if p.RemovalPolicy != awscdk.RemovalPolicy_RETAIN {
				t.Errorf("removal = %v", p.RemovalPolicy)
			}
		}},
		{name: "on-demand caps", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 500}}, check: func(t *testing.T, p table.Policy) {
			// The write cap left at 0 keeps the stage's.
			if p.Billing.MaxReadRequestUnits != 500 || p.Billing.MaxWriteRequestUnits != table.ProdMaxWriteRequestUnits || p.Billing.Mode != table.OnDemand {
				t.Errorf("billing = %+v", p.Billing)
			}
		}},
		{name: "cap above the quota", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxWriteRequestUnits: 40001}}, want: "Billing.MaxWriteRequestUnits=40001 is above DynamoDB's default per-table quota of 40000: use at most 40000"},
		{name: "document's key", spec: kmsSpec, stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			if p.Encryption != table.AWSManaged {
				t.Errorf("encryption = %v, want the spec's AWS_MANAGED", p.Encryption)
			}
		}},
		{name: "stage overrides the document's key", spec: kmsSpec, stage: table.Dev, o: table.Overrides{Encryption: ptr(table.AWSOwned)}, check: func(t *testing.T, p table.Policy) {
			if p.Encryption != table.AWSOwned {
				t.Errorf("encryption = %v, want the override's AWS_OWNED", p.Encryption)
			}
		}},
		{name: "provisioned", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned, ReadCapacity: 5, WriteCapacity: 10}}, check: func(t *testing.T, p table.Policy) {
			if p.Billing.Mode != table.Provisioned {
				t.Errorf("billing = %+v", p.Billing)
			}
		}},
		{name: "provisioned without capacity", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned}}, want: "Billing.Mode=PROVISIONED needs ReadCapacity and WriteCapacity of at least 1 (got 0/0)"},
		{name: "capacity with on-demand", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, ReadCapacity: 5}}, want: "Billing.ReadCapacity/WriteCapacity=5/0 with on-demand billing: set Mode to PROVISIONED"},
		{name: "caps with provisioned", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned, ReadCapacity: 1, WriteCapacity: 1, MaxWriteRequestUnits: 9}}, want: "cap on-demand throughput only"},
		{name: "negative cap", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: -1}}, want: "Billing.MaxReadRequestUnits=-1 is negative"},
		{name: "unknown billing", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: "FREE"}}, want: `Billing.Mode="FREE" is not PAY_PER_REQUEST or PROVISIONED`},
		{name: "unknown stage", spec: validSpec(), stage: "qa", want: `stage "qa" is not one of dev, stage, prod`},
		{name: "recovery off where required", spec: pitrSpec, stage: table.Prod, o: table.Overrides{PointInTimeRecovery: ptr(false)}, want: "PointInTimeRecovery=false, but the orders design requires point-in-time recovery in every stage: remove the override"},
		{name: "stream turned off", spec: streamSpec, stage: table.Dev, o: table.Overrides{Stream: ptr(table.NoStream)}, want: `Stream="", but the orders code consumes a OLD_IMAGE stream: remove the Stream override`},
		{name: "stream view changed", spec: streamSpec, stage: table.Dev, o: table.Overrides{Stream: ptr(table.KeysOnly)}, want: `Stream="KEYS_ONLY", but the orders code consumes a OLD_IMAGE stream`},
		{name: "contributor insights on throttled keys", spec: validSpec(), stage: table.Stg, o: table.Overrides{ContributorInsights: ptr(table.ThrottledKeys)}, check: func(t *testing.T, p table.Policy) {
			if p.ContributorInsights != table.ThrottledKeys {
				t.Errorf("contributor insights = %q", p.ContributorInsights)
			}
		}},
		{name: "contributor insights off by override", spec: validSpec(), stage: table.Prod, o: table.Overrides{ContributorInsights: ptr(table.NoContributorInsights)}, check: func(t *testing.T, p table.Policy) {
			if p.ContributorInsights != table.NoContributorInsights {
				t.Errorf("contributor insights = %q", p.ContributorInsights)
			}
		}},
		{name: "throttled keys by default in prod only", spec: validSpec(), stage: table.Prod, check: func(t *testing.T, p table.Policy) {
			if p.ContributorInsights != table.ThrottledKeys || p.WarmThroughput != (table.WarmThroughput{}) {
				t.Errorf("defaults = %q, %+v", p.ContributorInsights, p.WarmThroughput)
			}
		}},
		{name: "no contributor insights by default in stage", spec: validSpec(), stage: table.Stg, check: func(t *testing.T, p table.Policy) {
			if p.ContributorInsights != table.NoContributorInsights {
				t.Errorf("defaults = %q", p.ContributorInsights)
			}
		}},
		{name: "warm throughput under raised caps", spec: validSpec(), stage: table.Prod, o: table.Overrides{
			Billing:        &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 20000, MaxWriteRequestUnits: 8000},
			WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 20000, WriteUnitsPerSecond: 8000},
		}, check: func(t *testing.T, p table.Policy) {
			if p.WarmThroughput.ReadUnitsPerSecond != 20000 || p.WarmThroughput.WriteUnitsPerSecond != 8000 {
				t.Errorf("warm = %+v", p.WarmThroughput)
			}
		}},
		{name: "resource access for a role of another account", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{
			{Principal: "arn:aws:iam::210987654321:role/reporting", Actions: []string{"dynamodb:GetItem"}, Indexes: []string{"GSI1"}},
			{Principal: "210987654321", Actions: []string{"dynamodb:Query"}},
		}}, check: func(t *testing.T, p table.Policy) {
			if len(p.ResourceAccess) != 2 {
				t.Errorf("access = %+v", p.ResourceAccess)
			}
		}},
		{name: "resource access for everyone", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "*", Actions: []string{"dynamodb:GetItem"}}}}, want: `ResourceAccess[0]: Principal "*": name an IAM role ARN`},
		{name: "resource access for a user", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "arn:aws:iam::210987654321:user/bob", Actions: []string{"dynamodb:GetItem"}}}}, want: `Principal "arn:aws:iam::210987654321:user/bob"`},
		{name: "resource access to the control plane", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:DeleteTable"}}}}, want: `action "dynamodb:DeleteTable" is not a data-plane item action`},
		{name: "resource access to scan", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:Scan"}}}}, want: `action "dynamodb:Scan" is not a data-plane item action`},
		{name: "resource access by wildcard", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:*"}}}}, want: `action "dynamodb:*"`},
		{name: "resource access to an unknown index", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Indexes: []string{"ByDate"}}}}, want: `orders has no index "ByDate": use one of [GSI1]`},
		{name: "resource access granting nothing", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321"}}}, want: "no Actions and no Indexes grant nothing"},
		{name: "unknown contributor insights mode", spec: validSpec(), stage: table.Dev, o: table.Overrides{ContributorInsights: ptr(table.ContributorInsights("HOT_KEYS"))}, want: `ContributorInsights="HOT_KEYS" is not a mode: use THROTTLED_KEYS`},
		{name: "warm throughput that buys nothing", spec: validSpec(), stage: table.Dev, o: table.Overrides{WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 500}}, want: "WarmThroughput.ReadUnitsPerSecond=500 is below the 12000 every new on-demand table already has"},
		{name: "warm throughput above the quota", spec: validSpec(), stage: table.Prod, o: table.Overrides{WarmThroughput: &table.WarmThroughput{WriteUnitsPerSecond: 50000}}, want: "WarmThroughput.WriteUnitsPerSecond=50000 is above DynamoDB's default per-table quota of 40000"},
		{name: "warm throughput above the cap", spec: validSpec(), stage: table.Prod, o: table.Overrides{WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 15000}}, want: "WarmThroughput.ReadUnitsPerSecond=15000 is above Billing.MaxReadRequestUnits=10000: the cap throttles first"},
		{name: "unknown stream view", spec: validSpec(), stage: table.Dev, o: table.Overrides{Stream: ptr(table.StreamView("BOTH"))}, want: `Stream="BOTH" is not a stream view`},
		{name: "protected but destroyed", spec: validSpec(), stage: table.Stg, o: table.Overrides{DeletionProtection: ptr(true), RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}, want: "DeletionProtection=true with RemovalPolicy=DESTROY"},
		{name: "destroy in prod", spec: validSpec(), stage: table.Prod, o: table.Overrides{DeletionProtection: ptr(false), RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}, want: "RemovalPolicy=DESTROY in prod"},
		{name: "customer key missing", spec: validSpec(), stage: table.Dev, o: table.Overrides{Encryption: ptr(table.CustomerManaged)}, want: "Encryption=CUSTOMER_MANAGED without an EncryptionKey"},
		{name: "unknown encryption", spec: validSpec(), stage: table.Dev, o: table.Overrides{Encryption: ptr(table.Encryption("KMS"))}, want: `Encryption="KMS" is not one of`},
		{name: "recovery window too long", spec: validSpec(), stage: table.Prod, o: table.Overrides{RecoveryPeriodDays: ptr(90)}, want: "RecoveryPeriodDays=90: the window is 1 to 35 days"},
		{name: "recovery window without recovery", spec: validSpec(), stage: table.Dev, o: table.Overrides{RecoveryPeriodDays: ptr(7)}, want: "RecoveryPeriodDays=7 with PointInTimeRecovery=false"},
		{name: "reserved tag", spec: validSpec(), stage: table.Dev, o: table.Overrides{Tags: map[string]string{"stage": "qa"}}, want: `tag "stage" is set by the construct`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := table.Resolve(tt.spec, tt.stage, tt.o)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Resolve() = %v", err)
				}
				tt.check(t, p)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resolve() error = %v, want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, table.ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false for %v", err)
			}
		})
	}
}
