package testtool

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestWithPeakRSS: a small program's peak RSS read through the helper is
// its own, while its plain wait4 rusage holds this test process's 128 MiB
// (the vfork semantics WithPeakRSS avoids).
func TestWithPeakRSS(t *testing.T) {
	ballast := make([]byte, 128<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	direct := exec.Command("true")
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	peak := WithPeakRSS(t, cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	own, inherited := peak(), direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if own > 16<<10 || inherited < 128<<10 {
		t.Errorf("true's peak RSS: %d KiB through the helper (want its own, a few MiB), %d KiB by its own wait4 (want this process's 128 MiB or more)", own, inherited)
	}
	ballast[len(ballast)-1]++
}
