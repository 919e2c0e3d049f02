/* A woven library's frameless function (TestFramePointcutDlclose). */
int libtick(int x) { return x * 7 + 1; }
