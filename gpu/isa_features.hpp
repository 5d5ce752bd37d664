// The CPU features this translation unit was compiled to use, as an X-macro: DTSIM_FOR_EACH_COMPILED_FEATURE(X)
// expands X(glibc_name, "name") once for each instruction-set extension the compiler's -march allowed (read
// from the compiler's own predefined macros), so a portable x86-64-v3 build lists AVX, AVX2, FMA, BMI1, ...
// and a -march=native build whatever its build machine had. glibc_name is the token of <sys/platform/x86.h>'s
// CPU_FEATURE_ACTIVE.
//
// Covers every extension GCC and Clang emit for general code (vector, bit manipulation, crypto); feature
// bits no compiler emits unasked (CLFLUSHOPT, RDPID, ...) are left out: code that uses them checks at run time.
#pragma once

// clang-format off
#ifdef __SSE3__
#define DTSIM_FEATURE_SSE3(X) X(SSE3, "sse3")
#else
#define DTSIM_FEATURE_SSE3(X)
#endif
#ifdef __SSSE3__
#define DTSIM_FEATURE_SSSE3(X) X(SSSE3, "ssse3")
#else
#define DTSIM_FEATURE_SSSE3(X)
#endif
#ifdef __SSE4_1__
#define DTSIM_FEATURE_SSE4_1(X) X(SSE4_1, "sse4.1")
#else
#define DTSIM_FEATURE_SSE4_1(X)
#endif
#ifdef __SSE4_2__
#define DTSIM_FEATURE_SSE4_2(X) X(SSE4_2, "sse4.2")
#else
#define DTSIM_FEATURE_SSE4_2(X)
#endif
#ifdef __SSE4A__
#define DTSIM_FEATURE_SSE4A(X) X(SSE4A, "sse4a")
#else
#define DTSIM_FEATURE_SSE4A(X)
#endif
#ifdef __POPCNT__
#define DTSIM_FEATURE_POPCNT(X) X(POPCNT, "popcnt")
#else
#define DTSIM_FEATURE_POPCNT(X)
#endif
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_16
#define DTSIM_FEATURE_CMPXCHG16B(X) X(CMPXCHG16B, "cx16")
#else
#define DTSIM_FEATURE_CMPXCHG16B(X)
#endif
#ifdef __LAHF_SAHF__
#define DTSIM_FEATURE_LAHF_SAHF(X) X(LAHF64_SAHF64, "lahf_lm")
#else
#define DTSIM_FEATURE_LAHF_SAHF(X)
#endif
#ifdef __AVX__
#define DTSIM_FEATURE_AVX(X) X(AVX, "avx") X(OSXSAVE, "osxsave")
#else
#define DTSIM_FEATURE_AVX(X)
#endif
#ifdef __AVX2__
#define DTSIM_FEATURE_AVX2(X) X(AVX2, "avx2")
#else
#define DTSIM_FEATURE_AVX2(X)
#endif
#ifdef __FMA__
#define DTSIM_FEATURE_FMA(X) X(FMA, "fma")
#else
#define DTSIM_FEATURE_FMA(X)
#endif
#ifdef __FMA4__
#define DTSIM_FEATURE_FMA4(X) X(FMA4, "fma4")
#else
#define DTSIM_FEATURE_FMA4(X)
#endif
#ifdef __XOP__
#define DTSIM_FEATURE_XOP(X) X(XOP, "xop")
#else
#define DTSIM_FEATURE_XOP(X)
#endif
#ifdef __F16C__
#define DTSIM_FEATURE_F16C(X) X(F16C, "f16c")
#else
#define DTSIM_FEATURE_F16C(X)
#endif
#ifdef __BMI__
#define DTSIM_FEATURE_BMI1(X) X(BMI1, "bmi1")
#else
#define DTSIM_FEATURE_BMI1(X)
#endif
#ifdef __BMI2__
#define DTSIM_FEATURE_BMI2(X) X(BMI2, "bmi2")
#else
#define DTSIM_FEATURE_BMI2(X)
#endif
#ifdef __LZCNT__
#define DTSIM_FEATURE_LZCNT(X) X(LZCNT, "lzcnt")
#else
#define DTSIM_FEATURE_LZCNT(X)
#endif
#ifdef __MOVBE__
#define DTSIM_FEATURE_MOVBE(X) X(MOVBE, "movbe")
#else
#define DTSIM_FEATURE_MOVBE(X)
#endif
#ifdef __ADX__
#define DTSIM_FEATURE_ADX(X) X(ADX, "adx")
#else
#define DTSIM_FEATURE_ADX(X)
#endif
#ifdef __AES__
#define DTSIM_FEATURE_AES(X) X(AES, "aes")
#else
#define DTSIM_FEATURE_AES(X)
#endif
#ifdef __PCLMUL__
#define DTSIM_FEATURE_PCLMUL(X) X(PCLMULQDQ, "pclmulqdq")
#else
#define DTSIM_FEATURE_PCLMUL(X)
#endif
#ifdef __SHA__
#define DTSIM_FEATURE_SHA(X) X(SHA, "sha")
#else
#define DTSIM_FEATURE_SHA(X)
#endif
#ifdef __GFNI__
#define DTSIM_FEATURE_GFNI(X) X(GFNI, "gfni")
#else
#define DTSIM_FEATURE_GFNI(X)
#endif
#ifdef __VAES__
#define DTSIM_FEATURE_VAES(X) X(VAES, "vaes")
#else
#define DTSIM_FEATURE_VAES(X)
#endif
#ifdef __VPCLMULQDQ__
#define DTSIM_FEATURE_VPCLMULQDQ(X) X(VPCLMULQDQ, "vpclmulqdq")
#else
#define DTSIM_FEATURE_VPCLMULQDQ(X)
#endif
#ifdef __AVXVNNI__
#define DTSIM_FEATURE_AVX_VNNI(X) X(AVX_VNNI, "avx_vnni")
#else
#define DTSIM_FEATURE_AVX_VNNI(X)
#endif
#ifdef __AVX512F__
#define DTSIM_FEATURE_AVX512F(X) X(AVX512F, "avx512f")
#else
#define DTSIM_FEATURE_AVX512F(X)
#endif
#ifdef __AVX512BW__
#define DTSIM_FEATURE_AVX512BW(X) X(AVX512BW, "avx512bw")
#else
#define DTSIM_FEATURE_AVX512BW(X)
#endif
#ifdef __AVX512CD__
#define DTSIM_FEATURE_AVX512CD(X) X(AVX512CD, "avx512cd")
#else
#define DTSIM_FEATURE_AVX512CD(X)
#endif
#ifdef __AVX512DQ__
#define DTSIM_FEATURE_AVX512DQ(X) X(AVX512DQ, "avx512dq")
#else
#define DTSIM_FEATURE_AVX512DQ(X)
#endif
#ifdef __AVX512VL__
#define DTSIM_FEATURE_AVX512VL(X) X(AVX512VL, "avx512vl")
#else
#define DTSIM_FEATURE_AVX512VL(X)
#endif
#ifdef __AVX512VNNI__
#define DTSIM_FEATURE_AVX512_VNNI(X) X(AVX512_VNNI, "avx512_vnni")
#else
#define DTSIM_FEATURE_AVX512_VNNI(X)
#endif
#ifdef __AVX512BF16__
#define DTSIM_FEATURE_AVX512_BF16(X) X(AVX512_BF16, "avx512_bf16")
#else
#define DTSIM_FEATURE_AVX512_BF16(X)
#endif
#ifdef __AVX512FP16__
#define DTSIM_FEATURE_AVX512_FP16(X) X(AVX512_FP16, "avx512_fp16")
#else
#define DTSIM_FEATURE_AVX512_FP16(X)
#endif
#ifdef __AVX512IFMA__
#define DTSIM_FEATURE_AVX512_IFMA(X) X(AVX512_IFMA, "avx512_ifma")
#else
#define DTSIM_FEATURE_AVX512_IFMA(X)
#endif
#ifdef __AVX512VBMI__
#define DTSIM_FEATURE_AVX512_VBMI(X) X(AVX512_VBMI, "avx512_vbmi")
#else
#define DTSIM_FEATURE_AVX512_VBMI(X)
#endif
#ifdef __AVX512VBMI2__
#define DTSIM_FEATURE_AVX512_VBMI2(X) X(AVX512_VBMI2, "avx512_vbmi2")
#else
#define DTSIM_FEATURE_AVX512_VBMI2(X)
#endif
#ifdef __AVX512BITALG__
#define DTSIM_FEATURE_AVX512_BITALG(X) X(AVX512_BITALG, "avx512_bitalg")
#else
#define DTSIM_FEATURE_AVX512_BITALG(X)
#endif
#ifdef __AVX512VPOPCNTDQ__
#define DTSIM_FEATURE_AVX512_VPOPCNTDQ(X) X(AVX512_VPOPCNTDQ, "avx512_vpopcntdq")
#else
#define DTSIM_FEATURE_AVX512_VPOPCNTDQ(X)
#endif
#ifdef __AVX512VP2INTERSECT__
#define DTSIM_FEATURE_AVX512_VP2INTERSECT(X) X(AVX512_VP2INTERSECT, "avx512_vp2intersect")
#else
#define DTSIM_FEATURE_AVX512_VP2INTERSECT(X)
#endif

#define DTSIM_FOR_EACH_COMPILED_FEATURE(X)                                                                  \
  DTSIM_FEATURE_SSE3(X) DTSIM_FEATURE_SSSE3(X) DTSIM_FEATURE_SSE4_1(X) DTSIM_FEATURE_SSE4_2(X)              \
  DTSIM_FEATURE_SSE4A(X) DTSIM_FEATURE_POPCNT(X) DTSIM_FEATURE_CMPXCHG16B(X) DTSIM_FEATURE_LAHF_SAHF(X)     \
  DTSIM_FEATURE_AVX(X) DTSIM_FEATURE_AVX2(X) DTSIM_FEATURE_FMA(X) DTSIM_FEATURE_FMA4(X) DTSIM_FEATURE_XOP(X) \
  DTSIM_FEATURE_F16C(X) DTSIM_FEATURE_BMI1(X) DTSIM_FEATURE_BMI2(X) DTSIM_FEATURE_LZCNT(X)                  \
  DTSIM_FEATURE_MOVBE(X) DTSIM_FEATURE_ADX(X) DTSIM_FEATURE_AES(X) DTSIM_FEATURE_PCLMUL(X)                  \
  DTSIM_FEATURE_SHA(X) DTSIM_FEATURE_GFNI(X) DTSIM_FEATURE_VAES(X) DTSIM_FEATURE_VPCLMULQDQ(X)              \
  DTSIM_FEATURE_AVX_VNNI(X) DTSIM_FEATURE_AVX512F(X) DTSIM_FEATURE_AVX512BW(X) DTSIM_FEATURE_AVX512CD(X)    \
  DTSIM_FEATURE_AVX512DQ(X) DTSIM_FEATURE_AVX512VL(X) DTSIM_FEATURE_AVX512_VNNI(X)                          \
  DTSIM_FEATURE_AVX512_BF16(X) DTSIM_FEATURE_AVX512_FP16(X) DTSIM_FEATURE_AVX512_IFMA(X)                    \
  DTSIM_FEATURE_AVX512_VBMI(X) DTSIM_FEATURE_AVX512_VBMI2(X) DTSIM_FEATURE_AVX512_BITALG(X)                 \
  DTSIM_FEATURE_AVX512_VPOPCNTDQ(X) DTSIM_FEATURE_AVX512_VP2INTERSECT(X)
// clang-format on
