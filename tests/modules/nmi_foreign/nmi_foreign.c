// SPDX-License-Identifier: GPL-2.0
/*
 * nmi_foreign: NMIs that are not ptsim's, sent to a CPU while ptsim
 * raises its PMIs there, for the test that ptsim claims only the NMIs it
 * sent (tests/modules/nmi_foreign/nmi_foreign_test.c).
 *
 * It does what the kernel's own NMI senders do (the backtrace IPI of
 * sysrq l, the MCE injector): a flag per NMI, set before the IPI, and an
 * NMI_LOCAL handler that claims an NMI on the target CPU while the flag
 * is up and lowers it.  A kthread on another CPU sends them one after the
 * other, each after the previous one was claimed (or 1 s went by), with
 * a pause of 1 to 1.1 ms in between, so that they land at every point of
 * ptsim's own sending.
 *
 * It also plays the NMI_UNKNOWN handlers that must never be shown an NMI
 * of ptsim's in the normal path (ipmi_watchdog's pre-NMI handler, which
 * panics, or Hyper-V's, which latches): a handler at NMI_UNKNOWN that
 * counts every NMI it is shown, on any CPU, and claims none.
 *
 * debugfs nmi_foreign/run: writing "<target cpu> <count>" sends count
 * NMIs to the target from a CPU other than it, and returns when they are
 * sent.  nmi_foreign/counts: "sent <n> claimed <n> unanswered <n>
 * unknown_seen <n>", the NMIs sent, those the handler claimed, those it
 * had not claimed within 1 s of their sending, and the NMIs the
 * NMI_UNKNOWN handler was shown.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>

static int nmi_foreign_target = -1;
static atomic_t nmi_foreign_pending = ATOMIC_INIT(0);
static atomic_long_t nmi_foreign_sent, nmi_foreign_claimed;
static atomic_long_t nmi_foreign_unanswered, nmi_foreign_unknown_seen;
static DEFINE_MUTEX(nmi_foreign_lock);
static struct dentry *nmi_foreign_dir;

static int nmi_foreign_handler(unsigned int cmd, struct pt_regs *regs)
{
	if (smp_processor_id() != READ_ONCE(nmi_foreign_target) ||
	    !atomic_add_unless(&nmi_foreign_pending, -1, 0))
		return NMI_DONE;
	atomic_long_inc(&nmi_foreign_claimed);
	return NMI_HANDLED;
}

/* Shown every NMI that no NMI_LOCAL handler claimed: count, claim none. */
static int nmi_foreign_witness(unsigned int cmd, struct pt_regs *regs)
{
	atomic_long_inc(&nmi_foreign_unknown_seen);
	return NMI_DONE;
}

struct nmi_foreign_run {
	int target;
	long count;
	struct completion done;
};

static int nmi_foreign_thread(void *arg)
{
	struct nmi_foreign_run *run = arg;
	long i;

	for (i = 0; i < run->count; i++) {
		u64 t0;

		atomic_inc(&nmi_foreign_pending);
		atomic_long_inc(&nmi_foreign_sent);
		__apic_send_IPI_mask(cpumask_of(run->target), NMI_VECTOR);
		/*
		 * An NMI is never lost (two merged into one are claimed
		 * together), so it is waited for; the bound is against a
		 * target that hangs, and the flag stays up for it.
		 */
		t0 = local_clock();
		while (atomic_read(&nmi_foreign_pending)) {
			if (local_clock() - t0 > NSEC_PER_SEC) {
				atomic_long_inc(&nmi_foreign_unanswered);
				break;
			}
			cpu_relax();
		}
		/*
		 * A millisecond before the next: an NMI of ptsim's that came
		 * while the flag was up took it, so this one is still on its
		 * way, and must land (and find ptsim's reasons, or its
		 * credit) before the flag goes up again, as with the
		 * kernel's senders, which send once and wait.  Without the
		 * pause the off-by-one carried on from NMI to NMI and the
		 * last one came long after any credit.
		 */
		usleep_range(1000, 1000 + get_random_u32_below(100));
	}
	complete(&run->done);
	return 0;
}

static ssize_t nmi_foreign_run_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	struct nmi_foreign_run run;
	struct task_struct *t;
	char buf[32];
	int sender;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	if (sscanf(buf, "%d %ld", &run.target, &run.count) != 2 ||
	    run.count < 0 || run.target < 0 || run.target >= nr_cpu_ids ||
	    !cpu_online(run.target))
		return -EINVAL;
	sender = cpumask_any_but(cpu_online_mask, run.target);
	if (sender >= nr_cpu_ids)
		return -ENODEV;

	mutex_lock(&nmi_foreign_lock);
	init_completion(&run.done);
	WRITE_ONCE(nmi_foreign_target, run.target);
	t = kthread_create(nmi_foreign_thread, &run, "nmi_foreign");
	if (IS_ERR(t)) {
		mutex_unlock(&nmi_foreign_lock);
		return PTR_ERR(t);
	}
	kthread_bind(t, sender);
	wake_up_process(t);
	wait_for_completion(&run.done);
	mutex_unlock(&nmi_foreign_lock);
	return count;
}

static const struct file_operations nmi_foreign_run_fops = {
	.owner	= THIS_MODULE,
	.write	= nmi_foreign_run_write,
};

static int nmi_foreign_counts_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "sent %ld claimed %ld unanswered %ld unknown_seen %ld\n",
		   atomic_long_read(&nmi_foreign_sent),
		   atomic_long_read(&nmi_foreign_claimed),
		   atomic_long_read(&nmi_foreign_unanswered),
		   atomic_long_read(&nmi_foreign_unknown_seen));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nmi_foreign_counts);

static int __init nmi_foreign_init(void)
{
	int ret;

	if (!boot_cpu_has(X86_FEATURE_APIC))
		return -ENODEV;
	ret = register_nmi_handler(NMI_LOCAL, nmi_foreign_handler, 0,
				   "nmi_foreign");
	if (ret)
		return ret;
	ret = register_nmi_handler(NMI_UNKNOWN, nmi_foreign_witness, 0,
				   "nmi_foreign_witness");
	if (ret) {
		unregister_nmi_handler(NMI_LOCAL, "nmi_foreign");
		return ret;
	}
	nmi_foreign_dir = debugfs_create_dir("nmi_foreign", NULL);
	debugfs_create_file("run", 0200, nmi_foreign_dir, NULL,
			    &nmi_foreign_run_fops);
	debugfs_create_file("counts", 0400, nmi_foreign_dir, NULL,
			    &nmi_foreign_counts_fops);
	return 0;
}

static void __exit nmi_foreign_exit(void)
{
	debugfs_remove_recursive(nmi_foreign_dir);
	unregister_nmi_handler(NMI_UNKNOWN, "nmi_foreign_witness");
	unregister_nmi_handler(NMI_LOCAL, "nmi_foreign");
}

module_init(nmi_foreign_init);
module_exit(nmi_foreign_exit);

MODULE_DESCRIPTION("NMIs that are not ptsim's, for ptsim's NMI test");
MODULE_LICENSE("GPL");
