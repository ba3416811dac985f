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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The emulator round-trips under an alias and refuses a decryption whose
// encryption context differs from the encryption's, as KMS does.
func TestRoundTripAndContext(t *testing.T) {
	ctx := context.Background()
	s, err := kmslocal.Start(ctx, kmslocal.Options{})
	require.NoError(t, err)
	defer s.Close()
	c, err := s.Client(ctx)
	require.NoError(t, err)
	arn, err := kmslocal.EnsureKey(ctx, c, "alias/test")
	require.NoError(t, err)
	again, err := kmslocal.EnsureKey(ctx, c, "alias/test")
	require.NoError(t, err, "second EnsureKey")
	require.Equal(t, arn, again, "second EnsureKey")
	require.True(t, strings.HasPrefix(arn, "arn:aws:kms:"), "EnsureKey: %q is not a KMS ARN", arn)
	enc, err := c.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/test"), Plaintext: []byte("secret"),
		EncryptionContext: map[string]string{"k": "v"}})
	require.NoError(t, err)
	dec, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: map[string]string{"k": "v"}})
	require.NoError(t, err, "decrypt")
	require.Equal(t, "secret", string(dec.Plaintext), "decrypted plaintext")
	require.Equal(t, arn, aws.ToString(dec.KeyId), "decrypting key")
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: map[string]string{"k": "w"}})
	assert.Error(t, err, "a wrong encryption context decrypted")
}

// The Makefile installs the version Find looks for.
func TestMakefilePinsVersion(t *testing.T) {
	root, err := repo.Root("")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "LOCAL_KMS_VERSION := "+kmslocal.Version+"\n", "the Makefile does not pin Local KMS's version")
}
