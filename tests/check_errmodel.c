/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_errmodel.c -- the joint quantile of a random direction's adjoint
   term (manual: "Directional checks", "The joint quantile"), tested
   against what it claims: for errors whose elements meet the accumulation
   bound's tail, P(|<zeta, e>| > (1+u) c ||sigma||_2) <= P, whether the
   elements are all one variable (rank one, the dependence the union bound
   fears) or independent; c is below the product of the two quantiles it
   replaces, and it grows as P shrinks and as the support grows.  Also the
   reports' ratio text (lib/base/buf.c).  The library exports no gc__ symbol:
   lib/bar/errmodel.c and lib/base/buf.c are compiled in.  */

#include "gctest.h"
#include "base/internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A reproducible stream (xorshift64*) from the suite's seed.  */
static uint64_t rs;

static double
unif (void)
{
  rs ^= rs >> 12;
  rs ^= rs << 25;
  rs ^= rs >> 27;
  return ((double) ((rs * 2685821657736338717ULL) >> 11) + 0.5) * 0x1p-53;
}

static double
normal (void)
{
  return sqrt (-2 * log (unif ())) * cos (2 * M_PI * unif ());
}

/* |G| with the extremal tail the premise allows, P(|G| > t) =
   min(1, 2 d exp(-t^2 beta / 2)): G = t(U) with that tail at U uniform;
   its sign at random.  */
static double
extremal (double d)
{
  const double beta = (1 - 0x1p-24) * (1 - 0x1p-24);
  double t = sqrt (2 * log (2 * d / unif ()) / beta);
  return unif () < 0.5 ? -t : t;
}

/* Rank one: e_i = sigma_i G, one G for all elements, so <zeta, e> =
   G <zeta, sigma> = G Z ||sigma||_2 with Z standard normal.  */
START_TEST (test_rank_one)
{
  static const size_t ds[] = { 1, 353, 13509 };
  const double p = 1e-3;
  rs = gct_seed () | 1;
  for (size_t j = 0; j < 3; j++)
    {
      double d = (double) ds[j];
      double c = gc__joint_quantile (p, ds[j], 213120);
      const long n = 400000;
      long over = 0;
      for (long s = 0; s < n; s++)
        over += fabs (extremal (d) * normal ()) > c;
      /* the bound holds; n p = 400 expected at worst, standard deviation
         20: 5 of them for the chance of a Monte Carlo excess */
      ck_assert_msg ((double) over <= n * p + 5 * sqrt (n * p),
                     "d %g: c %g exceeded %ld times of %ld (P %g)", d, c,
                     over, n, p);
    }
}
END_TEST

/* Independent elements: e_i = sigma_i G_i, K of them, sigma_i = 1.  */
START_TEST (test_independent)
{
  const double p = 1e-2, d = 353;
  const size_t k = 32;
  rs = gct_seed () | 1;
  double c = gc__joint_quantile (p, (size_t) d, k);
  const long n = 40000;
  long over = 0;
  for (long s = 0; s < n; s++)
    {
      double sum = 0;
      for (size_t i = 0; i < k; i++)
        sum += normal () * extremal (d);
      over += fabs (sum) > c * sqrt ((double) k);
    }
  ck_assert_msg ((double) over <= n * p + 5 * sqrt (n * p),
                 "c %g exceeded %ld times of %ld", c, over, n);
}
END_TEST

/* c against the product of quantiles lambda_w lambda_n it replaced
   (P split in halves, lambda_n for K bounds at once), and its
   monotonicity.  */
START_TEST (test_below_product)
{
  static const size_t ks[] = { 1, 2052, 13492, 213120 };
  const double adir = 1e-6 / 64;
  double prev = 0;
  for (size_t j = 0; j < 4; j++)
    {
      double c = gc__joint_quantile (adir / 2, 1081, ks[j]);
      double lw = sqrt (2 * log (4 / adir));
      double ln = gc__lambda (adir / 2, ks[j], 1081);
      ck_assert_msg (c < lw * ln, "k %zu: c %g, lambda_w lambda_n %g", ks[j],
                     c, lw * ln);
      ck_assert (c >= prev);
      prev = c;
      ck_assert (gc__joint_quantile (adir, 1081, ks[j]) <= c);
    }
  /* a subnormal probability (a false-alarm rate of 2^-1074 shared) has a
     quantile, larger than a normal one's; the grid ends */
  double cs = gc__joint_quantile (0x1p-1074, 1081, 13492);
  ck_assert_msg (isfinite (cs) || isinf (cs), "c %g", cs);
  ck_assert (cs >= gc__joint_quantile (1e-300, 1081, 13492));
  /* a zero or negative probability has no quantile */
  ck_assert (isinf (gc__joint_quantile (0, 10, 10)));
}
END_TEST

/* The quantile's contract (manual: "Directional checks"): the least C
   to within 2^-20 with the tail bound at most P -- the tail at C is at
   most P, and 2^-20 below C it is above P -- over probabilities from
   1e-3 to a subnormal one, depths and supports from 1 to 10^6: the
   search (a bracket narrowed by false position) must keep both ends.  */
START_TEST (test_quantile_contract)
{
  static const double ps[] = { 1e-3, 1e-6, 1e-9, 1e-20, 1e-300, 0x1p-1074 };
  static const size_t ds[] = { 1, 3, 1081, 100000 };
  static const size_t ks[] = { 1, 12, 13492, 1000000 };
  for (size_t i = 0; i < 6; i++)
    for (size_t j = 0; j < 4; j++)
      for (size_t l = 0; l < 4; l++)
        {
          double p = ps[i], c = gc__joint_quantile (p, ds[j], ks[l]);
          if (isinf (c))
            {
              /* none within the search: the tail at its top is above P */
              ck_assert (gc__joint_tail (1024, ds[j], ks[l], p) > p);
              continue;
            }
          ck_assert_msg (gc__joint_tail (c, ds[j], ks[l], p) <= p,
                         "P %g d %zu k %zu: tail at C %.17g above P", p,
                         ds[j], ks[l], c);
          double below = c * (1 - 0x1p-20);
          ck_assert_msg (gc__joint_tail (below, ds[j], ks[l], p) > p,
                         "P %g d %zu k %zu: C %.17g not the least (the "
                         "tail at %.17g is within P)", p, ds[j], ks[l], c,
                         below);
        }
}
END_TEST

/* A ratio that is not 1 never prints as 1 (lib/base/buf.c, compiled in): a
   failing direction at 1e-5 relative showed "analytic / reference = 1".  */
START_TEST (test_ratio_text)
{
  char b[40];
  static const double rs[] = { 1 + 1e-5, 1 - 1e-5, 1 + 0x1p-52, 1 - 0x1p-53 };
  for (size_t k = 0; k < 4; k++)
    {
      gc__ratio_text (b, sizeof b, rs[k], 4);
      ck_assert_msg (strcmp (b, "1") != 0, "%.17g printed as %s", rs[k], b);
      ck_assert (b[2] == (rs[k] > 1 ? '+' : '-'));
      /* it reads back as the ratio, to the 3 digits of its difference */
      double d = strtod (b + 4, NULL);
      ck_assert (fabs (d - fabs (rs[k] - 1)) <= 1e-3 * fabs (rs[k] - 1));
    }
  ck_assert_str_eq (gc__ratio_text (b, sizeof b, 1, 4), "1");
  ck_assert_str_eq (gc__ratio_text (b, sizeof b, 2.5, 4), "2.5");
  ck_assert_str_eq (gc__ratio_text (b, sizeof b, 0.999, 4), "0.999");
  ck_assert_str_eq (gc__ratio_text (b, sizeof b, NAN, 4), "nan");
}
END_TEST

static Suite *
errmodel_suite (void)
{
  Suite *s = suite_create ("errmodel");
  TCase *tc = tcase_create ("joint quantile");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_rank_one);
  tcase_add_test (tc, test_independent);
  tcase_add_test (tc, test_below_product);
  tcase_add_test (tc, test_quantile_contract);
  tcase_add_test (tc, test_ratio_text);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (errmodel_suite ());
}
