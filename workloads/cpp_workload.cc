// cpp_workload [SECONDS]: C++ names for the demangler: a namespace, a class method and a
// template, all hot.
//
// Stacks (leaf first): ns::churn<unsigned long>(unsigned long, int) <- ns::Worker::spin(int)
// <- ns::Worker::run(unsigned long) <- main.  Roughly 3/4 of the samples land in the
// template and 1/4 in Worker::spin itself.  Both call out, so neither is a leaf and both keep
// their frame pointers under GCC 12.
#include <cstdint>

#include "common.h"

namespace ns {

volatile std::uint64_t sink;

WL_KEEP void publish(std::uint64_t x)
{
	sink = x;
}

template <typename T>
WL_KEEP T churn(T seed, int n)
{
	T x = seed;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	publish(x);
	return x;
}

class Worker {
public:
	void run(std::uint64_t deadline);
	void spin(int n);

private:
	std::uint64_t state_ = 1;
};

WL_KEEP void Worker::spin(int n)
{
	std::uint64_t y = state_;

	// Own work (a third of the template's) so the method has self samples too.
	for (int i = 0; i < n / 3; i++)
		y = y * 2862933555777941757u + 3037000493u;
	state_ = churn<std::uint64_t>(y, n);
}

WL_KEEP void Worker::run(std::uint64_t deadline)
{
	while (!wl_expired(deadline))
		spin(100000);
}

} // namespace ns

int main(int argc, char **argv)
{
	ns::Worker w;

	w.run(wl_deadline(argc, argv));
	return 0;
}
