// Elementary functions that give the same bits on every x86-64 CPU and with every C library.
//
// Why not <cmath>: glibc picks exp, log, pow, sin and cos among several implementations at load time by the
// CPU's features (an FMA variant, an FMA4 one, a plain SSE2 one; GLIBC_TUNABLES can change the pick), and
// other C libraries and glibc versions round differently in the last bit. Training amplifies one last-bit
// difference into a different accuracy, so the numerics of dtsim's CPU reference call these instead.
//
// How they stay the same everywhere: each function uses only +, −, ×, ÷ and sqrt, which IEEE 754 rounds
// exactly, on doubles, in the order written; portable_math.cpp is compiled with -ffp-contract=off so the
// compiler fuses no multiply-add, and it reads no global state (the rounding mode is pinned to nearest by
// numerics_environment). They are accurate to a few units in the last place (tests/gpu/portable_math_test.cpp
// measures each against glibc over its domain), not correctly rounded: agreement with glibc is not the goal,
// agreement with themselves on every machine is.
//
// Every function follows C99 Annex F for NaN, infinities and signed zeros where the test names it.
#pragma once

namespace dtsim::portable {

double exp(double x);
double expm1(double x);  // e^x − 1, accurate near 0
double log(double x);
double log1p(double x);  // log(1 + x), accurate near 0
// x^y. An integer y with |y| ≤ 64 by repeated squaring (exact where the powers are representable: 2^10,
// 0.5^3, 3^2); any other y as exp(y · log x), whose relative error grows with |y · log x| (20 ulp at 14).
double pow(double x, double y);
// sin and cos reduce the argument by π/2 in three parts: accurate to a few ulp for |x| < 2^19 · π/2 (≈ 8.2e5),
// deterministic up to 2^60 with a growing error, NaN beyond. dtsim's angles are below 2π·(sequence length).
double sin(double x);
double cos(double x);
double tanh(double x);
double erf(double x);

}  // namespace dtsim::portable
