package bearer_test

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/bearer"
)

const tok = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl"

// TestCheckArgs: the token flag with a value is refused in every
// spelling, and the refusal names the safe ways, never the value.
func TestCheckArgs(t *testing.T) {
	for _, args := range [][]string{
		{"-stak-token", tok},
		{"--stak-token", tok},
		{"-stak-token=" + tok},
		{"--stak-token=" + tok},
		{"-stage", "prod", "-stak-token", tok, "-wait", "1s"},
	} {
		err := bearer.Stak.CheckArgs(args)
		require.Error(t, err, "%q", args)
		assert.NotContains(t, err.Error(), tok, "%q: the refusal prints the token", args)
		for _, way := range []string{"STAK_TOKEN_FILE=<path>", "-stak-token-file <path>", "STAK_TOKEN_FILE=-", "-stak-token-stdin", "STAK_TOKEN exported in the environment", "chmod 600"} {
			assert.Contains(t, err.Error(), way, "%q: the refusal does not name a safe way", args)
		}
	}
	for _, args := range [][]string{
		nil,
		{"-stak-token-file", "/run/user/1000/stak"},
		{"-stak-token-stdin", "-stage", "prod"},
		{"-url", "stak=https://x", "--", "-stak-token"},
	} {
		assert.NoError(t, bearer.Stak.CheckArgs(args), "%q", args)
	}
}

// TestRead: the token from the environment, a file, standard input (by
// flag or STAK_TOKEN_FILE=-); nothing given is ""; every refusal keeps
// the token out of its message.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	require.NoError(t, os.WriteFile(private, []byte(tok+"\n"), 0o600))
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.WriteFile(shared, []byte(tok+"\n"), 0o600))
	require.NoError(t, os.Chmod(shared, 0o644)) // past any umask
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	two := filepath.Join(dir, "two")
	require.NoError(t, os.WriteFile(two, []byte(tok+"\n"+tok+"\n"), 0o600))
	long := filepath.Join(dir, "long")
	require.NoError(t, os.WriteFile(long, []byte(strings.Repeat("a", bearer.MaxLen+1)), 0o600))

	for _, tt := range []struct {
		name  string
		args  []string
		env   map[string]string
		stdin string
		want  string // the token read; "" with err "" is none given
		err   string
	}{
		{name: "none"},
		{name: "environment", env: map[string]string{"STAK_TOKEN": tok}, want: tok},
		{name: "file by flag", args: []string{"-stak-token-file", private}, want: tok},
		{name: "file by variable", env: map[string]string{"STAK_TOKEN_FILE": private}, want: tok},
		{name: "flag over variable", args: []string{"-stak-token-file", private}, env: map[string]string{"STAK_TOKEN_FILE": shared}, want: tok},
		{name: "stdin by flag", args: []string{"-stak-token-stdin"}, stdin: tok + "\n", want: tok},
		{name: "stdin by variable", env: map[string]string{"STAK_TOKEN_FILE": "-"}, stdin: " " + tok + "\r\n", want: tok},
		{name: "stdin by file flag", args: []string{"-stak-token-file", "-"}, stdin: tok, want: tok},
		{name: "file others can read", args: []string{"-stak-token-file", shared}, err: "can be read by other users (mode 0644): chmod 600 " + shared},
		{name: "missing file", env: map[string]string{"STAK_TOKEN_FILE": filepath.Join(dir, "nope")}, err: "the Stak token file: open "},
		{name: "empty file", args: []string{"-stak-token-file", empty}, err: "the Stak token from " + empty + " is empty"},
		{name: "empty stdin", args: []string{"-stak-token-stdin"}, err: "from standard input is empty"},
		{name: "two lines", args: []string{"-stak-token-file", two}, err: "holds whitespace or control characters inside"},
		{name: "too long", args: []string{"-stak-token-file", long}, err: "longer than 65536 bytes"},
		{name: "environment and file", args: []string{"-stak-token-file", private}, env: map[string]string{"STAK_TOKEN": tok}, err: "given 2 times (-stak-token-file, STAK_TOKEN): give it once"},
		{name: "environment and stdin", args: []string{"-stak-token-stdin"}, env: map[string]string{"STAK_TOKEN": tok}, stdin: tok, err: "given 2 times (-stak-token-stdin, STAK_TOKEN)"},
		{name: "file variable and stdin", args: []string{"-stak-token-stdin"}, env: map[string]string{"STAK_TOKEN_FILE": private}, err: "given 2 times (STAK_TOKEN_FILE, -stak-token-stdin)"},
		{name: "environment with a space", env: map[string]string{"STAK_TOKEN": "Bearer " + tok}, err: "from $STAK_TOKEN holds whitespace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("tool", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := bearer.Stak.Flags(fs)
			require.NoError(t, fs.Parse(tt.args))
			got, err := f.Read(func(k string) string { return tt.env[k] }, strings.NewReader(tt.stdin))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err, "Read()")
				assert.NotContains(t, err.Error(), tok, "the error prints the token")
				assert.Empty(t, got, "a refused token is returned")
				return
			}
			require.NoError(t, err, "Read()")
			assert.Equal(t, tt.want, got, "token")
		})
	}
}
