/* In gnu mode (no -std=c99) asm is a keyword and this is an error, which
   gcc and clang report; cc/v4's error recovery loops forever at the end
   of the text. weave must not hang on it (parse/watchdog.go). */
struct s { char *asm; };
