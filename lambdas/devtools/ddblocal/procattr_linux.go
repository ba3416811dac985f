package ddblocal

import "syscall"

// Own process group so Close can signal java and anything it forks; SIGKILL
// on parent death so a crashed parent does not leak the server. (Pdeathsig
// follows the creating OS thread; Go only retires threads that a goroutine
// locked, and Start does not lock one.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
