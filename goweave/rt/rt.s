// Present so that the compiler accepts the body-less declarations
// (nanotime, linked to the runtime's) on every architecture.
