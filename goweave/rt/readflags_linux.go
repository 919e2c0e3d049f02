package rt

import "syscall"

// readFlags open a file the runtime only peeks at: never through a link,
// never waiting on a FIFO planted at its name.
const readFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
