/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_screen.c -- screened directions (manual: "Screening"): random
   directions within each large tensor, the coordinates of the small ones,
   then every coordinate of a tensor where one did not pass; the
   confidence factors counted over every direction the check could take;
   the report says what was taken and reads back.  */

#include "gctest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gc_options
screen_options (size_t k, uint64_t seed)
{
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_SCREEN;
  o.n_random = k;
  o.seed = seed;
  return o;
}

/* How many of R's directions are random; how many are coordinates of
   block B.  */
static size_t
count_random (const gc_result *r)
{
  size_t c = 0;
  for (size_t q = 0; q < r->n_directions; q++)
    c += r->dirs[q].index == SIZE_MAX;
  return c;
}

static size_t
count_coordinates_in (const gc_result *r, size_t b)
{
  size_t c = 0, lo = r->blocks[b].offset, hi = lo + r->blocks[b].count;
  for (size_t q = 0; q < r->n_directions; q++)
    c += r->dirs[q].index >= lo && r->dirs[q].index < hi
         && r->dirs[q].index != SIZE_MAX;
  return c;
}

/* A correct model passes on the first round alone: K random directions
   per tensor of more than K elements, nothing else; every tensor says
   what its pass rules out; the directions are in the order of their ids,
   each random one's id b K + j in its block b.  The confidence factors
   are those of every direction the check could take (K + k_b per
   tensor): a whole-vector random check of that many directions has the
   same lambda, to the bit.  */
START_TEST (test_screen_pass)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  ck_assert_uint_eq (t->model.n_blocks, 2);
  size_t n = t->model.n, k = 5;
  for (int twin = 0; twin < 2; twin++)
    {
      gc_options o = screen_options (k, 3);
      o.no_twin = !twin;
      gc_result *r = gct_check_ok (&t->model, t->x, &o);
      ck_assert_int_eq (r->verdict, GC_PASS);
      ck_assert_int_eq (r->direction_kind, GC_DIR_SCREEN);
      ck_assert_uint_eq (r->n_directions, 2 * k);
      ck_assert_uint_eq (count_random (r), 2 * k);
      ck_assert_uint_eq (r->screen_first, 2 * k);
      ck_assert_uint_eq (r->screen_room, 2 * k + n);
      ck_assert_uint_eq (r->screen_superseded, 0);
      for (size_t q = 0; q < r->n_directions; q++)
        ck_assert_uint_eq (r->dirs[q].id, q);   /* block q / k's */
      char *s = gc_report (r, GC_FMT_TEXT);
      ck_assert_msg (strstr (s, "directions: screen (seed 3), 5 random per "
                             "block of more than 5 elements")
                     && !strstr (s, "then every coordinate"), "%s", s);
      const char *w = strstr (s, "\n  W "), *x = strstr (s, "\n  X ");
      ck_assert_msg (w && x && strstr (w, "a pass rules out")
                     && strstr (x, "a pass rules out"), "%s", s);
      free (s);

      gc_options ro;
      gc_options_init (&ro);
      ro.no_twin = o.no_twin;
      ro.directions = GC_DIR_RANDOM;
      ro.n_random = 2 * k + n;
      gc_result *rr = gct_check_ok (&t->model, t->x, &ro);
      ck_assert (rr->lambda_forward == r->lambda_forward);
      ck_assert (rr->lambda_backward == r->lambda_backward);
      gc_result_free (rr);
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* A bug in W alone: the first round fails W's random directions, the
   second takes W's every coordinate, which fail with the factor, and
   replace W's random ones; X keeps its random directions and what they
   rule out.  The diagnosis reads W's elements (a constant factor 2), the
   text names the second round, and the check costs W's coordinates and
   the first round, not X's coordinates.  At several seeds and with and
   without the twin.  */
START_TEST (test_screen_escalates)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  size_t k = 5, nw = t->model.blocks[0].count;
  ck_assert_str_eq (t->model.blocks[0].name, "W");
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.lo = 0;
  w.hi = nw;
  w.factor = 2;
  uint64_t ns = gct_seeds (4);
  for (int twin = 0; twin < 2; twin++)
    for (uint64_t seed = 1; seed <= ns; seed++)
      {
        gc_options o = screen_options (k, seed);
        o.no_twin = !twin;
        gc_result *r = gct_check_ok (&w.model, t->x, &o);
        ck_assert_int_eq (r->verdict, GC_FAIL);
        ck_assert_uint_eq (count_coordinates_in (r, 0), nw);
        ck_assert_uint_eq (count_coordinates_in (r, 1), 0);
        ck_assert_uint_eq (count_random (r), k);
        ck_assert_uint_eq (r->screen_superseded, k);
        ck_assert_uint_eq (r->screen_coarse, 0);   /* W's failed */
        ck_assert_uint_eq (r->n_directions, nw + k);
        ck_assert_uint_eq (r->n_failed, nw);
        for (size_t q = 1; q < r->n_directions; q++)
          ck_assert (r->dirs[q].id > r->dirs[q - 1].id);
        ck_assert_str_eq (r->diagnosis.block, "W");
        ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
        ck_assert_str_eq (r->diagnosis.closed_form, "2");
        char *s = gc_report (r, GC_FMT_TEXT);
        ck_assert_msg (strstr (s, "then every coordinate of 1 block where "
                               "one did not pass (W), whose 5 random "
                               "directions its coordinates replace"),
                       "%s", s);
        const char *x = strstr (s, "\n  X ");
        ck_assert_msg (x && strstr (x, "a pass rules out"), "%s", s);
        free (s);

        /* the JSON report reads back as the same check */
        s = gc_report (r, GC_FMT_JSON);
        gc_result *back = NULL;
        ck_assert_int_eq (gc_result_parse_json (s, strlen (s), &back), GC_OK);
        ck_assert_int_eq (back->direction_kind, GC_DIR_SCREEN);
        ck_assert_uint_eq (back->screen_superseded, k);
        ck_assert_uint_eq (back->screen_room, r->screen_room);
        ck_assert_uint_eq (back->n_directions, r->n_directions);
        ck_assert_int_eq (back->verdict, r->verdict);
        ck_assert_str_eq (back->diagnosis.text, r->diagnosis.text);
        char *s2 = gc_report (back, GC_FMT_TEXT);
        ck_assert_msg (strstr (s2, "whose 5 random directions"), "%s", s2);
        free (s2);
        free (s);
        /* never a shard: merging it is refused */
        gc_result *m = NULL;
        ck_assert_int_eq (gc_result_merge (&back, 1, &m), GC_EINVAL);
        ck_assert_ptr_null (m);
        gc_result_free (back);
        gc_result_free (r);
      }
  gct_free (t);
}
END_TEST

/* Tensors of at most K elements are checked by their coordinates from
   the start: K >= every block's size is the full check, direction for
   direction (the same count of bounds, n, so the same bars).  */
START_TEST (test_screen_small_blocks_are_coordinates)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  size_t n = t->model.n;
  gc_options o = screen_options (n, 1);
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  gc_options a;
  gc_options_init (&a);
  gc_result *all = gct_check_ok (&t->model, t->x, &a);
  ck_assert_uint_eq (r->n_directions, n);
  ck_assert_uint_eq (count_random (r), 0);
  ck_assert_int_eq (r->verdict, all->verdict);
  for (size_t q = 0; q < n; q++)
    {
      ck_assert_uint_eq (r->dirs[q].index, q);
      ck_assert (r->dirs[q].analytic == all->dirs[q].analytic);
      ck_assert (r->dirs[q].reference == all->dirs[q].reference);
    }
  gc_result_free (all);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Refusals: no random directions, a sharded screen, an HVP check of
   screened directions; each with its reason in the result.  A model
   without blocks is screened as one block.  */
START_TEST (test_screen_refusals_and_no_blocks)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_options o = screen_options (0, 1);
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&t->model, t->x, &o, &r), GC_EINVAL);
  ck_assert_msg (strstr (r->detail, "n_random is 0"), "%s", r->detail);
  gc_result_free (r);
  o = screen_options (4, 1);
  o.shard_count = 2;
  ck_assert_int_eq (gc_check (&t->model, t->x, &o, &r), GC_EINVAL);
  ck_assert_msg (strstr (r->detail, "not sharded"), "%s", r->detail);
  gc_result_free (r);
  o = screen_options (4, 1);
  o.n_random = SIZE_MAX / 2;
  ck_assert_int_eq (gc_check (&t->model, t->x, &o, &r), GC_EINVAL);
  gc_result_free (r);

  gct_wrap w;
  gct_wrap_init (&w, t);
  w.model.blocks = NULL;
  w.model.n_blocks = 0;
  w.lo = 0;
  w.hi = 16;
  w.factor = 3;
  o = screen_options (6, 1);
  r = gct_check_ok (&w.model, t->x, &o);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_uint_eq (r->n_directions, t->model.n);
  ck_assert_uint_eq (count_random (r), 0);   /* all replaced */
  ck_assert_uint_eq (r->screen_superseded, 6);
  ck_assert_uint_eq (r->n_failed, 16);
  ck_assert_uint_eq (r->diagnosis.first, 0);
  ck_assert_uint_eq (r->diagnosis.last, 15);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

static Suite *
screen_suite (void)
{
  Suite *s = suite_create ("screen");
  TCase *tc = tcase_create ("screen");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_screen_pass);
  tcase_add_test (tc, test_screen_escalates);
  tcase_add_test (tc, test_screen_small_blocks_are_coordinates);
  tcase_add_test (tc, test_screen_refusals_and_no_blocks);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (screen_suite ());
}
