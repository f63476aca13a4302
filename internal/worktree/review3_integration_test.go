//go:build integration

package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// /merge never turns an ignored file of the checkout into a directory:
// git would remove the person's .env to write the branch's .env/README.
func TestReview3MergeReplacesAnIgnoredFileWithADirectory(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	write(t, filepath.Join(root, ".gitignore"), ".env\n")
	commitIn(t, root, "ignore .env")
	write(t, filepath.Join(root, ".env"), "SECRET=the person's\n")
	path, branch, _ := thread(t, g, root, "701")
	os.Mkdir(filepath.Join(path, ".env"), 0o755)
	write(t, filepath.Join(path, ".env", "README"), "env files go here\n")
	gitOut(t, path, "add", "-f", ".env/README")
	commitIn(t, path, "env dir")

	before := gitOut(t, root, "rev-parse", "HEAD")
	res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, ".env") || !strings.Contains(nr.Reason, "ignores") {
		t.Fatalf("merge turning an ignored file into a directory: %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(root, ".env")); got != "SECRET=the person's\n" {
		t.Fatalf(".env = %q", got)
	}
	if gitOut(t, root, "rev-parse", "HEAD") != before {
		t.Fatal("a refused merge moved main")
	}
}

// /merge never turns an ignored directory of the checkout into a file:
// git would remove instance/ and the database in it.
func TestReview3MergeReplacesAnIgnoredDirectoryWithAFile(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	write(t, filepath.Join(root, ".gitignore"), "*.db\n")
	commitIn(t, root, "ignore databases")
	os.Mkdir(filepath.Join(root, "instance"), 0o755)
	write(t, filepath.Join(root, "instance", "app.db"), "the person's data\n")
	path, branch, _ := thread(t, g, root, "702")
	write(t, filepath.Join(path, "instance"), "a file now\n")
	commitIn(t, path, "instance file")

	before := gitOut(t, root, "rev-parse", "HEAD")
	res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "instance/app.db") {
		t.Fatalf("merge turning an ignored directory into a file: %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(root, "instance", "app.db")); got != "the person's data\n" {
		t.Fatalf("instance/app.db = %q", got)
	}
	if gitOut(t, root, "rev-parse", "HEAD") != before {
		t.Fatal("a refused merge moved main")
	}
}
