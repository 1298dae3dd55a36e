/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder so the store library exists before the window format lands. */
#include "basic/macro.h"
