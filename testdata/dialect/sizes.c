/* Types whose size cc/v4 does not compute as the compiler does: packed
   structures (__attribute__((packed)), #pragma pack, -fpack-struct) and
   enums under -fshort-enums. Each is allocated as sizeof(T), and printed
   with its size, which the profile's site must record. A local structure
   (left with cc/v4's size) must not break the woven unit. */
#include <stdio.h>
#include <stdlib.h>

enum small { A, B, C };
struct withenum {
	enum small e;
	char c;
};
struct __attribute__((packed)) pk {
	char c;
	int i;
};
#pragma pack(push, 1)
struct pp {
	char c;
	double d;
};
#pragma pack(pop)
typedef struct {
	short s;
	char c;
} anon_t;
union u {
	char c;
	enum small e[3];
};

#define KEEP(T)                                                  \
	do {                                                     \
		free(malloc(sizeof(T)));                         \
		printf("%s=%zu\n", #T, sizeof(T));               \
	} while (0)

int main(void)
{
	struct local {
		char c;
		long l;
	};
	struct pk *p = malloc(3 * sizeof *p);
	KEEP(enum small);
	KEEP(struct withenum);
	KEEP(struct pk);
	KEEP(struct pp);
	KEEP(anon_t);
	KEEP(union u);
	KEEP(struct withenum[4]);
	KEEP(struct local);
	free(p);
	return 0;
}
