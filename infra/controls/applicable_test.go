package controls

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A rule file runs unless every resource type it names is absent from
// every template; one naming no type always runs.
func TestApplicableRules(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"s3.guard":    "let b = Resources.*[ Type == 'AWS::S3::Bucket' ]\n",
		"ddb.guard":   "let t = Resources.*[ Type == 'AWS::DynamoDB::GlobalTable' ]\n",
		"mixed.guard": "let x = Resources.*[ Type == 'AWS::S3::Bucket' or Type == 'AWS::SQS::Queue' ]\n",
		"any.guard":   "rule any { Resources not empty }\n",
		"notes.txt":   "AWS::SQS::Queue\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := applicableRules([]string{dir}, []Template{{Types: map[string]string{"Q": "AWS::SQS::Queue"}}, {Types: map[string]string{"T": "AWS::DynamoDB::GlobalTable"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	if want := []string{"any.guard", "ddb.guard", "mixed.guard"}; !slices.Equal(got, want) {
		t.Fatalf("applicable %v, want %v", got, want)
	}
	if _, err := applicableRules([]string{dir}, nil); err != nil {
		t.Fatalf("the type-less file still applies: %v", err)
	}
}
