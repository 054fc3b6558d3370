#include "rowpump/worker.hpp"
