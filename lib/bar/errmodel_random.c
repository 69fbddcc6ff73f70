/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* errmodel_random.c -- the adjoint term along a random direction and its
   joint quantile (manual: "Directional checks"); the other terms of the
   pass bar are lib/bar/errmodel.c's.  */

#include "bar/errmodel.h"

#include <float.h>
#include <math.h>

/* Manual: "Directional checks", the adjoint term along a random
   direction: the smaller of the worst case (term T as gc__term_adjoint
   made it, SPREAD included) and
     lambda_w (1+u) ||b||_2 / N + 2u sum |v_i| b_i + sum |w_i - v_i| b_i
     + S_w,
   b_i = min(lambda_n sqrt(d_b), gamma_d/u) (u m_i + 2^-150), from
   Q2 = sum (u m_i + 2^-150)^2, QV = sum |v_i| (u m_i + 2^-150) and QD =
   sum |w_i - v_i| (u m_i + 2^-150) over the K elements of the support;
   ALPHA_DIR is the direction's share of the false-alarm budget.  Returns
   the worst-case value the same way (gamma_d in place of lambda_n sqrt(d):
   only the draw of w is then probabilistic).  */
/* Manual: "Directional checks", the joint quantile.  An upper bound on
   P(Q > q), Q = ||e||_2^2 / ||sigma||_2^2, when each of the K elements
   satisfies P(|e_i| > t sigma_i) <= min(1, 2 D exp(-t^2 beta / 2)),
   beta = (1 - u)^2 (Higham and Mary, Thm 3.1), whatever their
   dependence: the union bound 2 D K exp(-q beta / 2) (Q <= max_i
   e_i^2 / sigma_i^2), and for each a > 2 / beta the convexity bound
   K_a exp(-q / a), K_a = (2D)^(2 / (a beta)) a beta / (a beta - 2) >=
   E exp(e_i^2 / (a sigma_i^2)) for every i, hence >= E exp(Q / a).  */
/* The loop-invariant parts of q_tail for one DEPTH and K: the union
   bound's log (2 D K) and each convexity bound's log K_a (computed once
   per joint_tail, not once per grid step: the same values).  */
static const double q_tail_as[] = { 2.05, 2.1, 2.2, 2.35, 2.5, 2.75, 3,
                                    3.5, 4, 5, 6, 8 };
#define Q_TAIL_NA (sizeof q_tail_as / sizeof *q_tail_as)

typedef struct q_tail_logs
{
  double lu, lk[Q_TAIL_NA];
} q_tail_logs;

static void
q_tail_init (q_tail_logs *t, double depth, double k)
{
  const double beta = (1 - GC_U32) * (1 - GC_U32);
  t->lu = log (2 * depth * k);
  for (size_t j = 0; j < Q_TAIL_NA; j++)
    {
      double ab = q_tail_as[j] * beta;
      t->lk[j] = 2 / ab * log (2 * depth) + log (ab / (ab - 2));
    }
}

static double
q_tail (double q, const q_tail_logs *t)
{
  const double beta = (1 - GC_U32) * (1 - GC_U32);
  double lb = t->lu - q * beta / 2;
  for (size_t j = 0; j < Q_TAIL_NA; j++)
    lb = fmin (lb, t->lk[j] - q / q_tail_as[j]);
  return lb >= 0 ? 1 : exp (lb);
}

/* An upper bound on P(|<zeta, e>| > (1 + u) C ||sigma||_2), zeta
   independent of e with sub-Gaussian <zeta, e> given e:
   E[F(Q)], F(q) = min(1, 2 exp(-C^2 / 2q)), as the upper sum
   F(q_1) + sum_j (F(q_{j+1}) - F(q_j)) P(Q > q_j) over a geometric grid
   from q_1 (F(q_1) = P / 1000) to q* (F(q*) = 1); F increases, so the
   upper bounds q_tail may stand for P(Q > q_j).  */
static double
joint_tail (double c, const q_tail_logs *t, double p)
{
  double c2 = c * c;
  double qs = c2 / (2 * log (2.0));
  /* log (2000 / p) without forming 2000 / p: P may be subnormal (a
     false-alarm rate of 2^-1074 shared among many directions) */
  double q1 = c2 / (2 * (log (2000.0) - log (p)));
  /* a grid the geometric step cannot climb (q1 subnormal, or none):
     the trivial bound */
  if (!(q1 >= DBL_MIN) || !(qs > q1) || !isfinite (qs))
    return 1;
  double sum = 2 * exp (-c2 / (2 * q1));
  double fprev = sum;
  /* at most some 800 steps of 1.01 from q1 to qs for any double P: the
     ratio qs / q1 = log (2000 / P) / log 2 is below 1100 */
  for (double q = q1; q < qs;)
    {
      double qn = fmin (q * 1.01, qs);
      double fn = qn >= qs ? 1 : 2 * exp (-c2 / (2 * qn));
      sum += (fn - fprev) * q_tail (q, t);
      fprev = fn;
      q = qn;
    }
  return sum;
}

double
gc__joint_tail (double c, size_t depth, size_t k, double p)
{
  q_tail_logs t;
  q_tail_init (&t, (double) (depth ? depth : 1), (double) (k ? k : 1));
  return joint_tail (c, &t, p);
}

/* Manual: "Directional checks", the joint quantile: the least C (to
   within 2^-20 of it, rounded up) with joint_tail (C) <= P, or
   INFINITY.  */
double
gc__joint_quantile (double p, size_t depth, size_t k)
{
  double d = (double) (depth ? depth : 1), kk = (double) (k ? k : 1);
  double lo = 0, hi = 1024;
  q_tail_logs t;
  q_tail_init (&t, d, kk);
  double thi = p > 0 ? joint_tail (hi, &t, p) : INFINITY;
  if (!(thi <= p))
    return INFINITY;
  /* A bracket lo < C <= hi, tail (lo) > P >= tail (hi) (the ends
     evaluated; hi returned once within 2^-20 of lo, so of C), first
     [c, 2c] by doubling from 8, then narrowed by false position on
     g = log tail - log P, nearly linear in c there (the Illinois
     variant: an end that stays twice in a row has its g halved, so both
     ends close in): 9 to 14 evaluations of the tail where bisection from
     [0, 1024] took 36 (manual: "Directional checks").  */
  double lp = log (p), glo = -lp, ghi = log (thi) - lp;
  /* a first bracket [c, 2c] by doubling from 8 */
  for (double c = 8; c < hi; c *= 2)
    {
      double tc = joint_tail (c, &t, p);
      if (tc > p)
        {
          lo = c;
          glo = log (tc) - lp;
        }
      else
        {
          hi = c;
          ghi = log (tc) - lp;
          break;
        }
    }
  int stay = 0;   /* +1: lo stayed last step, -1: hi did */
  for (int it = 0; hi - lo > 0x1p-20 * hi; it++)
    {
      double width = hi - lo, mid = (lo + hi) / 2, c = mid;
      /* (after 64 steps, should the tail be rough at this scale, plain
         bisection: it ends in at most 50 more) */
      if (it < 64 && isfinite (glo) && isfinite (ghi) && glo > ghi)
        {
          c = lo + width * (glo / (glo - ghi));
          if (!(c > lo && c < hi))
            c = mid;
        }
      double tc = joint_tail (c, &t, p), gc = log (tc) - lp;
      if (tc > p)
        {
          lo = c;
          glo = gc;
          if (stay == -1)
            ghi /= 2;
          stay = -1;
        }
      else
        {
          hi = c;
          ghi = gc;
          if (stay == 1)
            glo /= 2;
          stay = 1;
        }
    }
  return hi;
}

double
gc__term_adjoint_random (gc_term *t, double worst, double alpha_dir,
                         double cq, size_t depth, size_t k, double q2,
                         double qv, double qd, double norm, double spread)
{
  /* the draw's main part takes alpha_dir / 2: the joint quantile CQ
     (gc__joint_quantile (alpha_dir / 2, ...)) on the probabilistic
     magnitudes, or lambda_w on the worst-case ones; the per-element
     bounds of the two small parts take the other half */
  double lw = sqrt (2 * log (4 / alpha_dir));
  double ln = gc__lambda (alpha_dir / 2, k, depth);
  double gu = gc__gamma_over_u (depth, 24);
  double sd = sqrt ((double) depth);
  double mult = fmin (ln * sd, gu);
  double main_mult = fmin (cq * sd, lw * gu);
  double norm_q = (1 + GC_U32) * sqrt (q2) / norm;
  double rand = main_mult * norm_q + mult * (2 * GC_U32 * qv + qd) + spread;
  double rand_wc = gu * (lw * norm_q + 2 * GC_U32 * qv + qd) + spread;
  if (norm > 0 && rand < t->value)
    {
      t->formula = gc__random_texts[0];
      t->section = gc__random_texts[1];
      t->n_inputs = 0;
      add_input (t, "c", cq);
      add_input (t, "lambda_w", lw);
      add_input (t, "lambda_n", ln);
      add_input (t, "d_b", (double) depth);
      add_input (t, "gamma_d / u", gu);
      add_input (t, "||u m + 2^-150||_2", sqrt (q2));
      add_input (t, "N", norm);
      add_input (t, "sum |v_i| (u m_i + 2^-150)", qv);
      add_input (t, "sum |w_i - v_i| (u m_i + 2^-150)", qd);
      add_input (t, "S_w", spread);
      t->value = rand;
    }
  return fmin (worst, norm > 0 ? rand_wc : INFINITY);
}
