/* A complete engine for the arena's engine protocol (clients/ENGINE_PROTOCOL.md), in C.
 * It answers `go` with a random move from the last `legal` line.
 * Build: cc -O2 -o random_engine random_engine.c
 * Run:   arena bot --engine ./random_engine  /  arena engine check ./random_engine
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LINE 65538
#define MAX_MOVES 4096

static char line[MAX_LINE];
static char legal_line[MAX_LINE];
static char *legal[MAX_MOVES];
static int n_legal = 0;

int main(void) {
    srand((unsigned)time(NULL));
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *cmd = strtok(line, " \t");
        if (cmd == NULL) continue;
        if (strcmp(cmd, "arena") == 0) {
            printf("id name random-engine-c\nid author Collapsi Arena examples\narenaok 1\n");
        } else if (strcmp(cmd, "isready") == 0) {
            printf("readyok\n");
        } else if (strcmp(cmd, "legal") == 0) {
            /* keep a copy: the next fgets overwrites `line` */
            char *rest = strtok(NULL, "");
            strcpy(legal_line, rest ? rest : "");
            n_legal = 0;
            for (char *m = strtok(legal_line, " \t"); m && n_legal < MAX_MOVES; m = strtok(NULL, " \t"))
                legal[n_legal++] = m;
        } else if (strcmp(cmd, "go") == 0) {
            printf("bestmove %s\n", n_legal ? legal[rand() % n_legal] : "resign");
        } else if (strcmp(cmd, "quit") == 0) {
            return 0;
        }
        /* newgame, position, setoption, stop, gameover and unknown lines need no answer */
        fflush(stdout);
    }
    return 0;
}
