package controls

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rule file runs unless every resource type it names is absent from
// every template; one naming no type always runs.
func TestApplicableRules(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"s3.guard":    "let b = Resources.*[ Type == 'AWS::S3::Bucket' ]\n",
		"ddb.guard":   "let t = Resources.*[ Type == 'AWS::DynamoDB::GlobalTable' ]\n",
		"mixed.guard": "let x = Resources.*[ Type == 'AWS::S3::Bucket' or Type == 'AWS::SQS::Queue' ]\n",
		// Control Tower's form: a declared type, and a reference check
		// naming a type present in the templates, which does not count.
		"ref.guard": "let APPSYNC_TYPE = \"AWS::AppSync::GraphQLApi\"\nlet a = Resources.*[ Type == %APPSYNC_TYPE ]\nrule r when %a not empty { %a { check_local_references(%INPUT_DOCUMENT, Role, \"AWS::SQS::Queue\") } }\n",
		"any.guard": "rule any { Resources not empty }\n",
		"notes.txt": "AWS::SQS::Queue\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	got, _, err := applicableRules([]string{dir}, []Template{{Types: map[string]string{"Q": "AWS::SQS::Queue"}}, {Types: map[string]string{"T": "AWS::DynamoDB::GlobalTable"}}})
	require.NoError(t, err)
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	require.Equal(t, []string{"any.guard", "ddb.guard", "mixed.guard"}, got, "applicable")
	_, _, err = applicableRules([]string{dir}, nil)
	require.NoError(t, err, "the type-less file still applies")
}

// typePattern is a Type filter by regular expression: `Type == /AWS::S3::.*/`.
var typePattern = regexp.MustCompile(`\bType\s*(==|!=|in)\s*/`)

func TestSelectedTypes(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		want        []string
	}{
		{"declared", `let S3_BUCKET_TYPE = "AWS::S3::Bucket"`, []string{"AWS::S3::Bucket"}},
		{"declared, single quotes", `let X_TYPE = 'AWS::SQS::Queue'`, []string{"AWS::SQS::Queue"}},
		{"inline filter", `let q = Resources.*[ Type == "AWS::SQS::Queue" ]`, []string{"AWS::SQS::Queue"}},
		{"inline list", `let q = Resources.*[ Type in ["AWS::SQS::Queue", "AWS::SNS::Topic"] ]`, []string{"AWS::SQS::Queue", "AWS::SNS::Topic"}},
		{"reference check", `check_local_references(%INPUT_DOCUMENT, KmsKeyId, "AWS::KMS::Key")`, nil},
		{"message", `<<\n  [CT.EKS.PR.2]: Require an AWS::KMS::Key\n>>`, nil},
		{"comment", `#   AWS::EKS::Cluster`, nil},
		{"commented declaration", `# let X_TYPE = "AWS::EKS::Cluster"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SelectedTypes(tc.rules), "SelectedTypes(%q)", tc.rules)
		})
	}
}

// TestSkippedRulesStaySilent runs the rule files applicableRules leaves out
// although they name a type the golden templates have (in a reference check
// or a message) over every golden template with the real cfn-guard: each of
// their rules must be not applicable (SKIP) everywhere, so leaving them out
// changes no finding and no applied control. The other skipped files name
// none of the templates' types, and none selects types by pattern, so they
// cannot select a resource. It fails when a new resource type or a new rules
// release makes a skipped file fire.
func TestSkippedRulesStaySilent(t *testing.T) {
	bin, shipped, err := Guard(filepath.Join("..", "..", "node_modules", "@cdklabs", "cdk-validator-cfnguard"))
	require.NoError(t, err, "make test runs make deps first")
	templates, err := Templates(filepath.Join("..", "..", "test", "snapshots"))
	require.NoError(t, err)
	keep, skip, err := applicableRules([]string{shipped, "rules"}, templates)
	require.NoError(t, err)
	require.NotEmpty(t, skip, "no rule file skipped: the filter should keep some and cut most")
	require.NotEmpty(t, keep, "no rule file kept: the filter should keep some and cut most")
	present := map[string]bool{}
	var paths []string
	for _, tp := range templates {
		paths = append(paths, tp.Path)
		for _, typ := range tp.Types {
			present[typ] = true
		}
	}
	var named []string // skipped, yet naming a present type
	for _, f := range skip {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotRegexp(t, typePattern, string(b), "%s selects types by pattern: SelectedTypes cannot tell what it selects", f)
		if slices.ContainsFunc(resourceType.FindAllString(string(b), -1), func(typ string) bool { return present[typ] }) {
			named = append(named, f)
		}
	}
	require.NotEmpty(t, named, "no skipped file names a present type: the test proves nothing (the filter changed?)")
	results, err := guardParallel(bin, named, paths)
	require.NoError(t, err)
	require.Len(t, results, len(templates), "cfn-guard reported on too few templates")
	for _, r := range results {
		assert.Empty(t, r.Compliant, "%s: a skipped rule file applies: SelectedTypes misses a type it selects", r.Name)
		assert.Empty(t, r.NotCompliant, "%s: a skipped rule file applies: SelectedTypes misses a type it selects", r.Name)
	}
	t.Logf("%d rule files run, %d skipped; the %d skipped that name a present type apply to none of %d templates", len(keep), len(skip), len(named), len(templates))
}
