package kmslocal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

// The emulator round-trips under an alias and refuses a decryption whose
// encryption context differs from the encryption's, as KMS does.
func TestRoundTripAndContext(t *testing.T) {
	ctx := context.Background()
	s, err := kmslocal.Start(ctx, kmslocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	arn, err := kmslocal.EnsureKey(ctx, c, "alias/test")
	if err != nil {
		t.Fatal(err)
	}
	again, err := kmslocal.EnsureKey(ctx, c, "alias/test")
	if err != nil || again != arn || !strings.HasPrefix(arn, "arn:aws:kms:") {
		t.Fatalf("EnsureKey: %q then %q, %v", arn, again, err)
	}
	enc, err := c.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/test"), Plaintext: []byte("secret"),
		EncryptionContext: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: map[string]string{"k": "v"}})
	if err != nil || string(dec.Plaintext) != "secret" || aws.ToString(dec.KeyId) != arn {
		t.Fatalf("decrypt: %+v %v", dec, err)
	}
	if _, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: map[string]string{"k": "w"}}); err == nil {
		t.Error("a wrong encryption context decrypted")
	}
}

// The Makefile installs the version Find looks for.
func TestMakefilePinsVersion(t *testing.T) {
	root, err := repo.Root("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "LOCAL_KMS_VERSION := " + kmslocal.Version + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("the Makefile does not pin %q", want)
	}
}
